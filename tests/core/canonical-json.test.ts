import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalEquals, canonicalJson } from '../../src/core/canonical-json.js';
import { hashCanonical } from '../../src/core/hashing.js';
import { substream } from '../../src/core/random.js';
import { nested } from '../helpers.js';

describe('canonicalJson', () => {
  it('sorts object keys at every depth and drops whitespace', () => {
    assert.equal(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } }), '{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}');
  });

  it('makes key order irrelevant to equality and hashes', () => {
    assert.ok(canonicalEquals({ x: 1, y: [1, 2] }, { y: [1, 2], x: 1 }));
    assert.ok(!canonicalEquals([1, 2], [2, 1]));
    assert.equal(hashCanonical({ a: 1, b: 2 }), hashCanonical({ b: 2, a: 1 }));
    assert.notEqual(hashCanonical({ a: 1 }), hashCanonical({ a: '1' }));
  });

  it('omits undefined fields like JSON.stringify but refuses values JSON cannot carry', () => {
    assert.equal(canonicalJson({ a: undefined, b: 2 }), '{"b":2}');
    assert.throws(() => canonicalJson({ a: Number.NaN }), /NaN/);
    assert.throws(() => canonicalJson(Infinity), /Infinity/);
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    assert.throws(() => canonicalJson(cycle), /cycle/);
  });

  it('escapes strings exactly as JSON does', () => {
    assert.equal(canonicalJson('line\n"quoted"\u2028'), JSON.stringify('line\n"quoted"\u2028'));
  });
});

// The serializer and equality have fast paths; this is the original
// implementation, kept here as the oracle they must agree with byte for byte.
function referenceJson(value: unknown, seen = new Set<object>()): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`canonical JSON cannot encode ${value}`);
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'undefined':
      throw new TypeError('canonical JSON cannot encode undefined outside an object');
    case 'bigint':
      return value.toString();
    case 'object': {
      if (seen.has(value)) throw new TypeError('canonical JSON cannot encode a cycle');
      seen.add(value);
      let out: string;
      if (Array.isArray(value)) {
        out = '[' + value.map((item) => (item === undefined ? 'null' : referenceJson(item, seen))).join(',') + ']';
      } else {
        const record = value as Record<string, unknown>;
        const keys = Object.keys(record)
          .filter((key) => record[key] !== undefined)
          .sort();
        out = '{' + keys.map((key) => JSON.stringify(key) + ':' + referenceJson(record[key], seen)).join(',') + '}';
      }
      seen.delete(value);
      return out;
    }
    default:
      throw new TypeError(`canonical JSON cannot encode a ${typeof value}`);
  }
}

/** What a call gives: its value, or the error it throws (type and message). */
function outcome<T>(run: () => T): { value: T } | { error: string } {
  try {
    return { value: run() };
  } catch (error) {
    return { error: `${(error as Error).constructor.name}: ${(error as Error).message}` };
  }
}

function show(value: unknown): string {
  return JSON.stringify(outcome(() => referenceJson(value)));
}

function referenceEquals(left: unknown, right: unknown): boolean {
  return referenceJson(left) === referenceJson(right);
}

const cycle: Record<string, unknown> = { a: 1 };
cycle.self = { back: cycle };
const deepCycle: Record<string, unknown> = {};
deepCycle.down = nested(300, deepCycle);
const hole = [1, , 3]; // eslint-disable-line no-sparse-arrays
const holeAtEnd = [1, 2, ,]; // eslint-disable-line no-sparse-arrays
const withInheritedName = Object.create({ toString: 1 }) as Record<string, unknown>;
withInheritedName.a = 1;
const hiddenKey: Record<string, unknown> = { a: 1 };
Object.defineProperty(hiddenKey, 'b', { value: 2, enumerable: false });

/** Values chosen to find the places a fast path could go wrong. */
const TRICKY: unknown[] = [
  null, true, false, 0, -0, 1, 1.5, -1e21, 1e21, 5e-324, Number.NaN, Infinity, -Infinity, 1n, 10n ** 30n, undefined,
  '', '0', '1', 'null', 'true', 'é', '\u212a', 'K', 'k', '\u017f', 's', '\ud83d\ude00', '\ud800', '\uffff', 'a"b\\c\n\u2028',
  [], [undefined], [null], [1, 2], [2, 1], [[1, [2, [3]]]], [[1, [2, [4]]]], hole, [1, undefined, 3], [1, null, 3], holeAtEnd, [1, 2],
  {}, { a: undefined }, { a: 1 }, { a: 1, b: undefined }, { b: undefined, a: 1 }, { a: '1' }, { a: 1n }, { a: [1, { b: Number.NaN }] },
  { z: 1, a: 2, é: 3, '\uffff': 4, '\ud83d\ude00': 5, '10': 6, '9': 7 }, { '9': 7, '10': 6, '\ud83d\ude00': 5, '\uffff': 4, é: 3, a: 2, z: 1 },
  { toString: 1 }, withInheritedName, { a: 1, toString: undefined }, hiddenKey, { a: 1, b: 2 }, Object.assign(Object.create(null), { a: 1 }),
  { f: () => 1 }, [Symbol('s')], { s: Symbol('s') }, new Date(0), new Map([[1, 2]]), new Uint8Array([1, 2]), { 0: 1, 1: 2 }, new String('ab'), { 0: 'a', 1: 'b' },
  cycle, deepCycle, nested(255, 1), nested(256, 1), nested(257, 1), nested(300, 1), nested(300, 2), nested(300, Number.NaN),
  { x: [1, { y: [true, null, 'x'] }], w: { v: {} } }, { w: { v: {} }, x: [1, { y: [true, null, 'x'] }] }, { w: { v: {} }, x: [1, { y: [true, null, 'y'] }] },
  { a: 1, later: Number.NaN }, { a: 2, later: Number.NaN }, [1, Infinity], [2, Infinity], { a: 2, f: () => 1 }, { a: 1, f: () => 1 },
];

describe('canonicalJson fast paths agree with the original implementation', () => {
  it('serializes every tricky value to the same bytes, or throws the same error', () => {
    for (const value of TRICKY) {
      assert.deepEqual(outcome(() => canonicalJson(value)), outcome(() => referenceJson(value)), `for ${show(value)}`);
    }
  });

  it('compares every pair of tricky values as the serialized texts compare, or throws the same error', () => {
    let equalPairs = 0;
    for (const left of TRICKY) {
      for (const right of TRICKY) {
        const expected = outcome(() => referenceEquals(left, right));
        assert.deepEqual(outcome(() => canonicalEquals(left, right)), expected, `${show(left)} vs ${show(right)}`);
        if ('value' in expected && expected.value) equalPairs++;
      }
    }
    // Key order, undefined keys, holes and -0 make distinct objects equal; the test must see some.
    assert.ok(equalPairs > TRICKY.length + 10, `only ${equalPairs} equal pairs`);
  });

  it('reuses the sorted order of objects with the same keys only when the keys really are the same', () => {
    // Same first key, different lengths, orders and sets; more shapes than are kept per first key; then all of them again, now cached.
    const objects: Record<string, unknown>[] = [];
    for (let count = 0; count < 40; count++) {
      const object: Record<string, unknown> = { id: count };
      for (let key = count % 7; key >= 0; key--) object[String.fromCharCode(122 - ((key * (count + 3)) % 26))] = key % 3 === 0 ? undefined : key;
      objects.push(object);
    }
    objects.push({ id: 1, b: 2, a: 3 }, { id: 1, a: 3, b: 2 }, { id: 1, a: 3, c: 2 }, { id: 1, a: undefined, b: 2 }, { b: 2, id: 1, a: 3 });
    // Key lists that read the same once joined by NUL.
    objects.push({ 'a\u0000b': 1, c: 2 }, { a: 1, 'b\u0000c': 2 }, { 'a\u0000b\u0000c': 3 }, { a: 1, b: 2, c: 3 }, { 'z\u0000a': 1, z: 2 }, { z: 1, 'a\u0000z': 2 });
    for (let pass = 0; pass < 2; pass++) {
      for (const object of objects) assert.equal(canonicalJson(object), referenceJson(object));
      assert.equal(canonicalJson(objects), referenceJson(objects));
    }
    // Maps keyed by ids: every value a new shape, far more than are kept, and some with many keys.
    for (let count = 0; count < 20000; count++) {
      const map: Record<string, unknown> = { [`k${count}`]: 1, [`j${count % 50}`]: [count], a: { [String(count)]: null } };
      if (count % 1000 === 0) for (let key = 0; key < 40; key++) map[`m${(key * 7919) % 40}`] = key;
      assert.equal(canonicalJson(map), referenceJson(map));
    }
  });

  it('agrees on random values and their reordered, lightly changed copies', () => {
    const random = substream(7, 'canonical-json-test');
    const leaves: unknown[] = [null, true, false, 0, -0, 1, 2, 'a', 'b', 'é', '\u017f', '', undefined, 1n, Number.NaN];
    const keys = ['a', 'b', 'c', 'é', 'Z', '1', '10', '\ud83d\ude00'];
    const generate = (depth: number): unknown => {
      const roll = random.next();
      if (depth > 3 || roll < 0.4) return random.pick(leaves.slice(0, random.chance(0.97) ? 13 : leaves.length));
      if (roll < 0.7) return Array.from({ length: random.int(0, 3) }, () => generate(depth + 1));
      const out: Record<string, unknown> = {};
      for (const key of random.sample(keys, random.int(0, 4))) out[key] = generate(depth + 1);
      return out;
    };
    // A copy with keys reinserted in another order and, sometimes, one change somewhere.
    const variant = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map((item) => (random.chance(0.05) ? generate(3) : variant(item)));
      if (typeof value === 'object' && value !== null) {
        const out: Record<string, unknown> = {};
        for (const key of random.shuffle(Object.keys(value))) {
          if (random.chance(0.03)) continue;
          out[key] = random.chance(0.05) ? generate(3) : variant((value as Record<string, unknown>)[key]);
        }
        if (random.chance(0.05)) out[random.pick(keys)] = random.chance(0.5) ? undefined : generate(3);
        return out;
      }
      return random.chance(0.05) ? generate(3) : value;
    };
    let equal = 0;
    let unequal = 0;
    for (let round = 0; round < 4000; round++) {
      const left = generate(0);
      const right = variant(left);
      assert.deepEqual(outcome(() => canonicalJson(left)), outcome(() => referenceJson(left)));
      const expected = outcome(() => referenceEquals(left, right));
      assert.deepEqual(outcome(() => canonicalEquals(left, right)), expected, `${show(left)} vs ${show(right)}`);
      if ('value' in expected) expected.value ? equal++ : unequal++;
    }
    assert.ok(equal > 1000 && unequal > 200, `${equal} equal, ${unequal} unequal`);
  });
});
