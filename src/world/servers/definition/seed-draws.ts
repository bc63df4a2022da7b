// Owns the draws of a seed program: the vocabularies bound into a scope, then
// each `let` drawn from the world's random substream in the order written, so
// the same seed always binds the same names to the same values. A `for_each`
// draw runs its own draws once per item of a list, in a child scope that sees
// the parent's names, and binds the list of those child scopes.

import { FactoryError } from '../../../core/errors.js';
import type { JsonObject, JsonValue } from '../../../core/json-value.js';
import type { Random } from '../../../core/random.js';
import { evaluate, renderValue, type Scope } from './definition-template.js';
import type { Count, DrawDefinition, SeedDefinition } from './server-world-definition.js';

function invalid(where: string, pointer: string, message: string, fix: string): FactoryError {
  return new FactoryError('definition_invalid', `${where}: ${pointer}: ${message}`, { fix, problems: [{ where: `${where}#${pointer}`, reason: message }] });
}

/** Runs `work`; a template's definition error comes out naming the file and the JSON pointer it was found at. */
export function located<T>(where: string, pointer: string, work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof FactoryError && error.code === 'definition_invalid' && error.problems.length === 0) {
      throw new FactoryError('definition_invalid', `${where}: ${pointer}: ${error.message}`, { fix: error.fix, problems: [{ where: `${where}#${pointer}`, reason: error.message }], cause: error });
    }
    throw error;
  }
}

/** The list a draw names: a vocabulary or a bound name, a dotted path allowed. */
export function namedList(name: string, scope: Scope, where: string, pointer: string): JsonValue[] {
  const value = evaluate(name, scope);
  if (!Array.isArray(value)) throw invalid(where, pointer, `"${name}" is not a list`, 'name a vocabulary or a bound list');
  return value;
}

function drawCount(count: Count, random: Random, where: string, pointer: string): number {
  if (typeof count === 'number') {
    if (!Number.isInteger(count) || count < 0) throw invalid(where, pointer, `count ${count} is not a whole number`, 'write a count of 0 or more');
    return count;
  }
  if (!Number.isInteger(count.min) || !Number.isInteger(count.max) || count.min < 0 || count.max < count.min) {
    throw invalid(where, pointer, `count {min: ${count.min}, max: ${count.max}} is not a range of whole numbers`, 'write {"min": a, "max": b} with 0 <= a <= b');
  }
  return random.int(count.min, count.max);
}

function draw(definition: DrawDefinition, scope: Scope, random: Random, where: string, pointer: string): JsonValue {
  if ('pick' in definition) {
    const list = namedList(definition.pick, scope, where, `${pointer}/pick`);
    if (list.length === 0) throw invalid(where, `${pointer}/pick`, `"${definition.pick}" is empty: nothing to pick`, 'pick from a list with items');
    return random.pick(list);
  }
  if ('sample' in definition) {
    const list = namedList(definition.sample, scope, where, `${pointer}/sample`);
    const count = drawCount(definition.count, random, where, `${pointer}/count`);
    if (count > list.length) throw invalid(where, `${pointer}/count`, `sample of ${count} from "${definition.sample}", which holds ${list.length}`, `sample at most ${list.length}`);
    return random.sample(list, count);
  }
  if ('integer' in definition) {
    const { min, max } = definition.integer;
    if (!Number.isInteger(min) || !Number.isInteger(max) || max < min) throw invalid(where, `${pointer}/integer`, `{min: ${min}, max: ${max}} is not a range of integers`, 'write {"min": a, "max": b} with a <= b');
    return random.int(min, max);
  }
  if ('chance' in definition) {
    if (!(definition.chance >= 0 && definition.chance <= 1)) throw invalid(where, `${pointer}/chance`, `${definition.chance} is not a probability`, 'write a number from 0 to 1');
    return random.chance(definition.chance);
  }
  if ('value' in definition) return renderValue(definition.value, scope);
  if ('for_each' in definition) {
    const list = namedList(definition.for_each, scope, where, `${pointer}/for_each`);
    return list.map((item, index) => {
      const own: JsonObject = { [definition.as]: item, index };
      const child: Record<string, JsonValue> = { ...scope, ...own };
      runDraws(definition.draws, child, random, where, `${pointer}/draws`, own);
      return own;
    });
  }
  throw invalid(where, pointer, 'names no kind of draw', 'give it one of pick, sample, integer, chance, value, for_each');
}

/** Runs the draws in order, binding each into `scope` (and into `own`, the names this level drew). */
function runDraws(draws: readonly DrawDefinition[], scope: Record<string, JsonValue>, random: Random, where: string, pointer: string, own?: JsonObject): void {
  draws.forEach((definition, index) => {
    const value = located(where, `${pointer}/${index}`, () => draw(definition, scope, random, where, `${pointer}/${index}`));
    scope[definition.let] = value;
    if (own) own[definition.let] = value;
  });
}

/** The scope the files and commands render against: the vocabularies, then every draw. */
export function drawScope(seed: SeedDefinition, random: Random, where: string): Record<string, JsonValue> {
  const scope: Record<string, JsonValue> = { ...(seed.vocabularies ?? {}) };
  runDraws(seed.draws ?? [], scope, random, where, '/seed/draws');
  return scope;
}
