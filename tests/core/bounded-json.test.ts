import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertValueDepth, jsonTextDepth, JsonLimitError, MAX_JSON_DEPTH, parseBoundedJson, valueDepth } from '../../src/core/bounded-json.js';

const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('bounded JSON', () => {
  it('measures depth without counting brackets inside strings or escaped quotes', () => {
    assert.equal(jsonTextDepth('1'), 0);
    assert.equal(jsonTextDepth('{"a":[1,{"b":[]}]}'), 4);
    assert.equal(jsonTextDepth('{"a":"[[[[\\"[[["}'), 1);
    assert.equal(jsonTextDepth(nested(10)), 10);
  });

  it('parses a document at the limit and refuses one past it, naming the limit', () => {
    assert.deepEqual(parseBoundedJson(nested(3), { maxDepth: 3 }), [[[]]]);
    assert.throws(
      () => parseBoundedJson(nested(4), { maxDepth: 3, where: 'the request body' }),
      (error: unknown) => error instanceof JsonLimitError && error.limit === 'depth' && /the request body nests deeper than 3 levels/.test(error.message),
    );
  });

  it('refuses 100,000 levels without a stack overflow, and stops scanning early', () => {
    const text = nested(100_000);
    assert.throws(() => parseBoundedJson(text), (error: unknown) => error instanceof JsonLimitError && error.maximum === MAX_JSON_DEPTH && error.found === MAX_JSON_DEPTH + 1);
  });

  it('counts size in UTF-8 bytes', () => {
    assert.equal(parseBoundedJson('"é"', { maxBytes: 4 }), 'é');
    assert.throws(() => parseBoundedJson('"éé"', { maxBytes: 5 }), (error: unknown) => error instanceof JsonLimitError && error.limit === 'size' && error.found === 6);
  });

  it('leaves syntax errors to JSON.parse', () => {
    assert.throws(() => parseBoundedJson('{"a":'), SyntaxError);
  });

  it('measures a parsed value iteratively', () => {
    let deep: unknown = 1;
    for (let level = 0; level < 50_000; level++) deep = { next: deep };
    assert.equal(valueDepth(deep, 10), 11);
    assert.equal(valueDepth({ a: [1, { b: null }] }), 3);
    assert.equal(valueDepth('x'), 0);
    assert.throws(() => assertValueDepth(deep, 128, 'arguments'), /arguments nests deeper than 128 levels/);
    assert.doesNotThrow(() => assertValueDepth({ a: [] }, 2));
  });
});
