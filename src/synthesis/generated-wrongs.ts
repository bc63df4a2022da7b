// Owns the wrong trajectories of a synthesised task, made from its golden
// actions: the same calls on a sibling record, a value off by a little, the
// last write left out. `lanes check` then requires the hidden predicates
// (not only the claims check) to fail each one, so a task whose predicates
// cannot tell these mistakes apart is never kept.

import { canonicalJson } from '../core/canonical-json.js';
import type { JsonValue } from '../core/json-value.js';
import type { ParamSpec, Predicate, SolutionStep, WrongTrajectory } from '../lanes/lane.js';
import type { Binding } from './argument-filling.js';
import { singular, slug } from './state-survey.js';
import { collectionAt, matchesWhere, type Where } from '../core/where-clause.js';

export interface WrongInputs {
  solution: SolutionStep[];
  params: Record<string, ParamSpec>;
  /** The first binding of each collection the calls name. */
  bindings: readonly Binding[];
  /** Fresh-value parameters (drawn from a fixed list). */
  fresh: ReadonlySet<string>;
  predicates: readonly Predicate[];
  /** Calls that changed the world, by their index in the solution. */
  writes: readonly number[];
  /** Each golden seed's initial state: a sibling of the record's kind must exist on every one. */
  initials: readonly JsonValue[];
}

export function generateWrongs(inputs: WrongInputs): WrongTrajectory[] {
  const wrongs: WrongTrajectory[] = [];
  // A record with no sibling on the surveyed seed cannot be mistaken for another.
  // In a change, only a record a write names can be mistaken for another: a read of the wrong one changes nothing checked.
  const written = inputs.writes.length === 0 ? inputs.solution : inputs.solution.filter((_, index) => inputs.writes.includes(index));
  const named = (binding: Binding) => JSON.stringify(written).includes(`{{${binding.param}.`);
  for (const binding of inputs.bindings.filter((entry) => entry.collection.items.length >= 2 && named(entry)).slice(0, 2)) {
    const identity = binding.field;
    const other = `${binding.param}_sibling`;
    // A sibling of the same kind (another open issue, not a closed one), so its calls succeed and only the record is
    // wrong; any other record when some seed has no second one of that kind.
    const spec = inputs.params[binding.param];
    const sameKind = spec && 'from' in spec ? Object.fromEntries(Object.entries(spec.where ?? {}).filter(([field]) => field !== identity)) : {};
    const twoOnEverySeed = inputs.initials.every((initial) => (collectionAt(initial, binding.collection.pointer) ?? []).filter((item) => matchesWhere(item, sameKind as Where)).length >= 2);
    const kind = twoOnEverySeed ? sameKind : {};
    const noun = singular(binding.collection.noun);
    const id = `acts-on-another-${slug(noun)}`;
    wrongs.push({
      id: wrongs.some((wrong) => wrong.id === id) ? `${id}-${wrongs.length + 1}` : id,
      description: `Makes the same calls on another ${noun} than the one asked for.`,
      params: { [other]: { from: binding.collection.pointer, where: { ...kind, [identity]: { not: `{{${binding.param}.${identity}}}` } } } },
      solution: replaceIn(inputs.solution, `{{${binding.param}.`, `{{${other}.`),
    });
  }
  const checked = canonicalJson(inputs.predicates as unknown as JsonValue);
  const seen = [...inputs.fresh].find((name) => checked.includes(`{{${name}}}`));
  if (seen) {
    const spec = inputs.params[seen];
    if (spec && 'choice' in spec) {
      const wrong = `${seen}_wrong`;
      // Text checked only as contained in a field (an edited line) would still be found inside a value with more added.
      const contained = checked.includes(`{"contains":"{{${seen}}}"}`);
      wrongs.push({
        id: `writes-another-${slug(seen)}`,
        description: `Writes a ${seen.replace(/_/g, ' ')} a little off from the one asked for.`,
        params: { [wrong]: { choice: spec.choice.map((value) => (typeof value === 'number' ? value + 1 : offByALittle(String(value), contained))) } },
        solution: replaceIn(inputs.solution, `{{${seen}}}`, `{{${wrong}}}`),
      });
    }
  }
  if (inputs.writes.length >= 2) {
    const last = inputs.writes[inputs.writes.length - 1]!;
    wrongs.push({
      id: 'leaves-out-the-last-write',
      description: 'Makes every change but the last, and says it is done.',
      solution: inputs.solution.filter((_, index) => index !== last),
    });
  }
  return wrongs;
}

function replaceIn(solution: SolutionStep[], from: string, to: string): SolutionStep[] {
  return JSON.parse(JSON.stringify(solution).split(from).join(to)) as SolutionStep[];
}

/** A value a little off from one asked for: with a suffix where the whole value is checked, cut short where it need only be contained. */
function offByALittle(value: string, contained: boolean): string {
  if (!contained) return `${value} (old)`;
  return value.includes(' ') ? value.slice(0, value.lastIndexOf(' ')) : value.slice(0, -1);
}
