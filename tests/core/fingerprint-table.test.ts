// Distinct values counted by 64-bit fingerprint in typed arrays, and strings
// kept in one buffer: what lets stats, card and report count distinct
// trajectories and wordings over millions of records in a few bytes each.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DistinctCount, FingerprintTable, StringArena } from '../../src/core/fingerprint-table.js';
import { sha256Hex } from '../../src/core/hashing.js';

describe('fingerprint table', () => {
  it('gives back the value a fingerprint was first added with, across growth', () => {
    const table = new FingerprintTable();
    const hashes = Array.from({ length: 5000 }, (_, index) => sha256Hex(`value ${index}`));
    hashes.forEach((hash, index) => assert.equal(table.getOrAdd(hash, index), undefined, `new: ${index}`));
    assert.equal(table.size, 5000);
    hashes.forEach((hash, index) => assert.equal(table.getOrAdd(hash, -1), index, `known: ${index}`));
    assert.equal(table.size, 5000, 'nothing added twice');
  });

  it('keeps a fingerprint of all zeros (what marks an empty slot), and works as a set without values', () => {
    const table = new FingerprintTable();
    assert.equal(table.get('0'.repeat(64)), undefined);
    assert.equal(table.getOrAdd('0'.repeat(64), 7), undefined);
    assert.equal(table.get('0'.repeat(64)), 7);
    assert.equal(table.size, 1);
    const set = new FingerprintTable({ withValues: false });
    const hashes = Array.from({ length: 3000 }, (_, index) => sha256Hex(`member ${index}`));
    for (const hash of hashes) assert.equal(set.getOrAdd(hash, 5), undefined);
    for (const hash of hashes) assert.equal(set.get(hash), 0, 'a set has no values: each reads 0');
    assert.equal(set.get(sha256Hex('member 3000')), undefined);
    assert.equal(set.size, 3000);
  });

  it('counts distinct texts', () => {
    const count = new DistinctCount();
    for (const text of ['a', 'b', 'a', '', 'c', '', 'b']) count.add(text);
    assert.equal(count.size, 4);
  });

  it('keeps strings, any characters, and finds each by its number', () => {
    const arena = new StringArena();
    const texts = Array.from({ length: 3000 }, (_, index) => `record-${index}-${'é✓'.repeat(index % 7)}`);
    const numbers = texts.map((text) => arena.add(text));
    assert.deepEqual(numbers, texts.map((_, index) => index));
    texts.forEach((text, index) => assert.equal(arena.get(index), text));
    assert.equal(arena.get(arena.add('')), '');
  });
});
