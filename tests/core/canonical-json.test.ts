import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalEquals, canonicalJson } from '../../src/core/canonical-json.js';
import { hashCanonical } from '../../src/core/hashing.js';

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
