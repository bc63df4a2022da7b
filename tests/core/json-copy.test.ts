import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inspect, isDeepStrictEqual } from 'node:util';
import { copyPlain } from '../../src/core/json-copy.js';
import { nested } from '../helpers.js';

function outcome(run: () => unknown): { value: unknown } | { error: string } {
  try {
    return { value: run() };
  } catch (error) {
    return { error: `${(error as Error).name}: ${(error as Error).message}` };
  }
}

const cycle: Record<string, unknown> = { a: 1 };
cycle.self = { back: cycle };
const nullPrototype = Object.assign(Object.create(null), { a: 1, b: [1] }) as object;
const protoKey = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as object;

const VALUES: unknown[] = [
  null, undefined, true, 0, -0, Number.NaN, Infinity, 1n, 'é\ud800', [], {}, [undefined, null], { a: undefined, b: null },
  { z: 1, a: { '10': 1, '9': [1, 2, { x: 'y' }] } }, nested(255, 1), nested(256, 1), nested(400, 'deep'),
  cycle, nullPrototype, { inner: nullPrototype }, protoKey, { inner: protoKey },
  [1, , 3], { list: [1, , 3] }, new Date(0), { when: new Date(0) }, new Map([[1, { a: 1 }]]), { set: new Set([1]) }, new Uint8Array([1, 2]),
  () => 1, { f: () => 1 }, [Symbol('s')], { s: Symbol('s') },
];

describe('copyPlain', () => {
  it('copies every value as structuredClone does, or refuses it with the same error', () => {
    for (const value of VALUES) {
      const expected = outcome(() => structuredClone(value));
      const actual = outcome(() => copyPlain(value));
      if ('error' in expected) {
        assert.deepEqual(actual, expected);
        continue;
      }
      assert.ok('value' in actual, `copyPlain threw ${inspect(actual)}`);
      assert.ok(isDeepStrictEqual(actual.value, expected.value), `copy of ${inspect(value, { depth: 2 })} differs`);
      if (typeof expected.value === 'object' && expected.value !== null) {
        assert.equal(Object.getPrototypeOf(actual.value), Object.getPrototypeOf(expected.value));
        assert.deepEqual(Object.keys(actual.value as object), Object.keys(expected.value), 'keys in the same order');
      }
    }
  });

  it('shares nothing with the original', () => {
    const original = { a: [1, { b: 2 }], c: { d: [] as number[] } };
    const copy = copyPlain(original);
    (copy.a[1] as { b: number }).b = 3;
    copy.c.d.push(1);
    assert.deepEqual(original, { a: [1, { b: 2 }], c: { d: [] } });
    assert.ok(!Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted'));
    const copied = copyPlain(protoKey) as Record<string, unknown>;
    assert.ok(Object.prototype.hasOwnProperty.call(copied, '__proto__'), 'an own "__proto__" field stays a field');
    assert.equal(Object.getPrototypeOf(copied), Object.prototype);
  });
});
