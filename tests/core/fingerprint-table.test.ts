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

  it('keeps strings that run across its megabyte blocks, and one longer than a block', () => {
    const arena = new StringArena();
    // Strings of 1,000 to 1,006 bytes (a two-byte character each time) cross the 1 MiB boundaries at varying places.
    const texts = Array.from({ length: 2500 }, (_, index) => `${index}:`.padEnd(1000, 'x') + 'é'.repeat(index % 4));
    const long = 'ü'.repeat(700_000); // 1.4 MB of UTF-8: three blocks
    const numbers = [...texts.map((text) => arena.add(text)), arena.add(long), arena.add('after')];
    assert.deepEqual(numbers, [...texts.map((_, index) => index), 2500, 2501]);
    texts.forEach((text, index) => assert.equal(arena.get(index), text, `string ${index}`));
    assert.equal(arena.get(2500), long);
    assert.equal(arena.get(2501), 'after');
  });
});
