// Predicates written from what golden calls did to a world: each change said
// through the task's parameters as a count with a where clause, kept only if
// every seed agrees; everything else guarded; a change no parameter names is
// refused, unless something the task names changed too (then it is collateral
// and its collection is left free). The predicates are then evaluated on the
// same snapshots, so the test proves they pass the golden run and fail doing
// nothing.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JsonValue } from '../../src/core/json-value.js';
import { evaluatePredicates } from '../../src/verify/predicates.js';
import { derivePredicates, type SeedState } from '../../src/synthesis/state-diff-predicates.js';
import { surveyState } from '../../src/synthesis/state-survey.js';

function world(seed: number): any {
  return {
    clock: 100 + seed,
    issues: {
      [`${10 + seed}`]: { number: 10 + seed, title: `First ${seed}`, state: 'open', labels: ['bug'], updated_at: `2026-01-0${seed + 1}` },
      [`${20 + seed}`]: { number: 20 + seed, title: `Second ${seed}`, state: 'open', labels: [], updated_at: '2026-01-01' },
      [`${30 + seed}`]: { number: 30 + seed, title: `Third ${seed}`, state: 'closed', labels: [], updated_at: '2026-01-01' },
    },
    people: [
      { login: `ana${seed}`, city: 'Oslo' },
      { login: `ben${seed}`, city: 'Porto' },
    ],
  };
}

/** Close the target issue and label it: what golden calls close_issue + add_label would leave. */
function closeAndLabel(seed: number, label: string): SeedState {
  const initial = world(seed);
  const final = structuredClone(initial);
  const target = final.issues[`${20 + seed}`];
  target.state = 'closed';
  target.labels = [label];
  target.updated_at = `2026-02-0${seed + 1}`;
  final.clock += 7 + seed;
  return { initial, final, params: { target: initial.issues[`${20 + seed}`], label } };
}

function judge(predicates: ReturnType<typeof derivePredicates>, state: SeedState, final: JsonValue) {
  return evaluatePredicates([...predicates.changes, ...predicates.guards], { initial: state.initial, final, answer: 'Done.', messages: [], params: state.params });
}

describe('predicates from a state diff', () => {
  const seeds = [closeAndLabel(0, 'urgent'), closeAndLabel(1, 'docs'), closeAndLabel(2, 'urgent')];
  const collections = surveyState(seeds[0]!.initial);

  it('says each change through the parameters, as every seed agrees, and guards the rest', () => {
    const derived = derivePredicates(seeds, collections);
    assert.equal(derived.problem, undefined);
    assert.deepEqual(
      derived.changes.map(({ id, ...predicate }) => [id, predicate]),
      [
        ['sets-state', { count: { path: '/issues', where: { number: '{{target.number}}', state: 'closed' } }, equals: 1 }],
        ['sets-labels', { count: { path: '/issues', where: { number: '{{target.number}}', labels: { includes: '{{label}}' } } }, equals: 1 }],
      ],
      'the label is written through its parameter; the time and the clock, which differ by seed, are not claimed',
    );
    assert.deepEqual(
      derived.guards.map(({ id, ...predicate }) => [id, predicate]),
      [
        ['touches-nothing-else', { unchanged: '', except: ['clock', 'issues'] }],
        ['keeps-other-issues', { unchanged: '/issues', except_where: { number: '{{target.number}}' } }],
      ],
    );
  });

  it('passes the golden run on every seed and fails doing nothing or touching another record', () => {
    const derived = derivePredicates(seeds, collections);
    for (const state of seeds) {
      assert.ok(judge(derived, state, state.final).every((verdict) => verdict.passed), 'the golden run passes');
      assert.ok(judge(derived, state, state.initial).some((verdict) => !verdict.passed), 'doing nothing fails');
      const also = structuredClone(state.final) as any;
      Object.values(also.issues as Record<string, any>)[0].state = 'closed';
      const failed = judge(derived, state, also).filter((verdict) => !verdict.passed).map((verdict) => verdict.id);
      assert.deepEqual(failed, ['keeps-other-issues'], 'closing another issue as well is caught by the guard');
    }
  });

  it('drops a change the seeds disagree on, and refuses a task whose every change disagrees', () => {
    const mixed = [closeAndLabel(0, 'urgent'), closeAndLabel(1, 'docs')];
    // The label is a literal here (no parameter gives it), so it differs by seed and is dropped; the state stays.
    for (const state of mixed) delete state.params.label;
    const derived = derivePredicates(mixed, collections);
    assert.deepEqual(derived.changes.map((predicate) => predicate.id), ['sets-state']);
    const onlyTimes = [0, 1].map((seed) => {
      const initial = world(seed);
      const final = structuredClone(initial);
      final.clock += seed + 1;
      return { initial, final, params: {} };
    });
    assert.match(derivePredicates(onlyTimes, collections).problem ?? '', /differs from seed to seed/);
  });

  it('refuses a change to a record no parameter names', () => {
    const state = closeAndLabel(0, 'urgent');
    const stray = { ...state, params: { label: 'urgent' } };
    const derived = derivePredicates([stray], collections);
    assert.match(derived.problem ?? '', /changed the issues record 20, which no parameter of the task names/);
  });

  it('leaves a collection free when a record no parameter names changed beside one the task names', () => {
    const states = [0, 1].map((seed) => {
      const state = closeAndLabel(seed, 'urgent');
      (state.final as any).people[1].city = 'Lima';
      return state;
    });
    const derived = derivePredicates(states, collections);
    assert.equal(derived.problem, undefined);
    assert.ok(!derived.guards.some((guard) => guard.unchanged === '/people'), 'no guard on the collection that moved collaterally');
    assert.deepEqual(derived.guards.find((guard) => guard.unchanged === '')?.except, ['clock', 'issues', 'people']);
  });

  it('guards a read-only run with one unchanged predicate', () => {
    const reads = [0, 1].map((seed) => ({ initial: world(seed), final: world(seed), params: {} }));
    assert.deepEqual(derivePredicates(reads, collections), { changes: [], guards: [{ id: 'changes-nothing', unchanged: '' }] });
  });

  it('writes a created record through the parameter that names it, and frees a map keyed by data', () => {
    const states = [0, 1].map((seed) => {
      const initial = world(seed);
      const final = structuredClone(initial);
      final.issues['99'] = { number: 99, title: `Fresh ${seed}`, state: 'open', labels: [], updated_at: 'x' };
      return { initial, final, params: { title: `Fresh ${seed}` } };
    });
    const derived = derivePredicates(states, collections);
    assert.deepEqual(derived.changes[0], { id: 'has-the-issues-record', count: { path: '/issues', where: { title: '{{title}}' } }, equals: 1 });
    assert.ok(derived.changes.some((predicate) => JSON.stringify(predicate.count?.where) === JSON.stringify({ title: '{{title}}', state: 'open' })));
    assert.equal(derived.guards.find((guard) => guard.unchanged === '/issues')?.allow_added, true);
  });

  it('says a line edited into a text as contained, and a name added to a list entry by entry', () => {
    const tree = (seed: number) => ({
      dirs: seed === 0 ? ['docs', 'notes'] : ['archive', 'docs', 'notes'],
      files: {
        'docs/a.md': { path: 'docs/a.md', name: 'a.md', text: `# A\nowner: P${seed}\n` },
        'docs/b.md': { path: 'docs/b.md', name: 'b.md', text: `# B\nstatus: s${seed}\n` },
      },
    });
    const states = [0, 1, 2].map((seed) => {
      const initial = tree(seed);
      const final = structuredClone(initial) as any;
      const fresh = ['amber delta: owner is on leave', 'opal fjord: ask the design team', 'jade spire: ready for sign-off'][seed]!;
      final.files['docs/a.md'].text = final.files['docs/a.md'].text.replace('# A', fresh);
      final.dirs = [...final.dirs, `zz-${seed}`, `aa-${seed}`].sort();
      return { initial, final, params: { target: initial.files['docs/a.md'], new_text: fresh, path: `aa-${seed}`, other: `zz-${seed}` } } as SeedState;
    });
    const derived = derivePredicates(states, surveyState(states[0]!.initial));
    assert.equal(derived.problem, undefined);
    assert.deepEqual(
      derived.changes.map(({ id, ...predicate }) => [id, predicate]),
      [
        ['adds-to-dirs', { path: '/dirs', contains: '{{path}}' }],
        ['adds-to-dirs-2', { path: '/dirs', contains: '{{other}}' }],
        ['sets-text', { count: { path: '/files', where: { name: '{{target.name}}', text: { contains: '{{new_text}}' } } }, equals: 1 }],
      ],
      'the rest of the text and the order of the list differ by seed; what the task put there does not',
    );
    for (const state of states) {
      const verdicts = judge(derived, state, state.final);
      assert.ok(verdicts.every((verdict) => verdict.passed), JSON.stringify(verdicts.filter((verdict) => !verdict.passed)));
      assert.ok(judge(derived, state, state.initial).some((verdict) => !verdict.passed), 'doing nothing fails');
    }
    const untagged = [0, 1].map((seed) => {
      const initial = { notes: { 'a.md': { name: 'a.md', front_matter: { tags: [`t${seed}`, 'project'] } }, 'b.md': { name: 'b.md', front_matter: { tags: ['ops'] } } } } as any;
      const final = structuredClone(initial);
      final.notes['a.md'].front_matter.tags = ['project'];
      return { initial, final, params: { target: initial.notes['a.md'] } } as SeedState;
    });
    assert.deepEqual(
      derivePredicates(untagged, surveyState(untagged[0]!.initial)).changes.map((predicate) => predicate.count?.where),
      [{ name: '{{target.name}}', 'front_matter.tags': { excludes: '{{target.front_matter.tags.0}}' } }],
      'a tag taken out is named through the note\'s first tag, one object down',
    );
    const same = derivePredicates([states[0]!, states[0]!], surveyState(states[0]!.initial));
    assert.ok(same.changes.every((predicate) => predicate.contains === undefined && !JSON.stringify(predicate).includes('"contains"')), 'where every seed agrees on the whole text and list, the whole is said alone');
  });
});
