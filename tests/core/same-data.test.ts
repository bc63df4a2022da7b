import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inspect, isDeepStrictEqual } from 'node:util';
import { canonicalJson } from '../../src/core/canonical-json.js';
import { copyPlain } from '../../src/core/json-copy.js';
import { substream } from '../../src/core/random.js';
import { sameData } from '../../src/core/same-data.js';

function text(run: () => unknown): string {
  try {
    return String(run());
  } catch (error) {
    return `threw ${(error as Error).message}`;
  }
}

/** What a cache keyed by sameData relies on: the two print and copy alike. */
function indistinguishable(left: unknown, right: unknown): boolean {
  return (
    text(() => JSON.stringify(left)) === text(() => JSON.stringify(right)) &&
    text(() => canonicalJson(left)) === text(() => canonicalJson(right)) &&
    isDeepStrictEqual(copyPlain(left), copyPlain(right)) &&
    Object.getPrototypeOf(left ?? {}) === Object.getPrototypeOf(right ?? {})
  );
}

const shared = { type: 'string', description: 'shared' };
const hole = [1, , 3]; // eslint-disable-line no-sparse-arrays

describe('sameData', () => {
  it('says "the same" of equal plain data, and of one value with itself', () => {
    const pairs: [unknown, unknown][] = [
      [1, 1], ['a', 'a'], [null, null], [undefined, undefined], [true, true], [shared, shared],
      [{ a: 1, b: [1, { c: 'x' }] }, { a: 1, b: [1, { c: 'x' }] }],
      [{ type: 'object', properties: { q: shared } }, { type: 'object', properties: { q: shared } }],
      [Object.assign(Object.create(null), { a: 1 }), Object.assign(Object.create(null), { a: 1 })],
      [[], []], [{}, {}],
    ];
    for (const [left, right] of pairs) {
      assert.ok(sameData(left, right), JSON.stringify(left));
      assert.ok(indistinguishable(left, right));
    }
  });

  it('says "not the same" whenever they could print or copy differently', () => {
    const pairs: [unknown, unknown][] = [
      [0, -0], [-0, 0], [Number.NaN, Number.NaN], [1, '1'], [null, undefined], [{}, []], [[], {}],
      [{ a: 1, b: 2 }, { b: 2, a: 1 }], [{ a: 1 }, { a: 1, b: undefined }], [{ a: 1, b: undefined }, { a: 1 }], [{ a: undefined }, { a: undefined }],
      [[undefined], [null]], [[undefined], [undefined]], [hole, [1, undefined, 3]], [hole, hole.slice()], [[1, 2], [1, 2, 3]],
      [new Date(0), new Date(0)], [new Map(), new Map()], [{ d: new Date(0) }, { d: new Date(0) }], [Object.create(null), {}],
      [{ a: { b: [1, 2] } }, { a: { b: [1, 3] } }], [{ a: 1n }, { a: 2n }],
    ];
    for (const [left, right] of pairs) assert.equal(sameData(left, right), false, `${inspect(left)} vs ${inspect(right)}`);
  });

  it('never calls different data the same on random values and their copies', () => {
    const random = substream(5, 'same-data-test');
    const leaves: unknown[] = [null, true, false, 0, -0, 1, 'a', 'b', '', undefined, Number.NaN];
    const generate = (depth: number): unknown => {
      const roll = random.next();
      if (depth > 3 || roll < 0.4) return random.pick(leaves);
      if (roll < 0.7) return Array.from({ length: random.int(0, 3) }, () => generate(depth + 1));
      const out: Record<string, unknown> = {};
      for (const key of random.sample(['a', 'b', 'c', '1', '10'], random.int(0, 3))) out[key] = generate(depth + 1);
      return out;
    };
    const change = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map((item) => (random.chance(0.1) ? generate(3) : change(item)));
      if (typeof value === 'object' && value !== null) {
        const keys = random.chance(0.1) ? random.shuffle(Object.keys(value)) : Object.keys(value);
        const out: Record<string, unknown> = {};
        for (const key of keys) out[key] = random.chance(0.1) ? generate(3) : change((value as Record<string, unknown>)[key]);
        return out;
      }
      return random.chance(0.1) ? generate(3) : value;
    };
    let same = 0;
    for (let round = 0; round < 5000; round++) {
      const left = generate(0);
      const right = change(left);
      if (sameData(left, right)) {
        same++;
        assert.ok(indistinguishable(left, right), `${text(() => JSON.stringify(left))} vs ${text(() => JSON.stringify(right))}`);
      }
    }
    assert.ok(same > 1000, `${same} same`);
  });
});
