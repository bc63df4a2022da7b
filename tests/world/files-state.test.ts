import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { byteLength } from '../../src/world/files/files-state.js';

describe('byteLength', () => {
  it('counts the bytes TextEncoder writes, lone surrogates as U+FFFD', () => {
    const encoder = new TextEncoder();
    const pieces = ['', 'a', '\n', 'é', '€', '\u07ff', '\u0800', '\uffff', '\ud83d\ude00', '\ud800', '\udfff', '\udc00\ud800', '\ud800\ud800\udc00', 'a\ud800'];
    for (const left of pieces) {
      for (const right of pieces) {
        const text = left + right;
        assert.equal(byteLength(text), encoder.encode(text).length, JSON.stringify(text));
      }
    }
  });
});
