// The index of record ids a pass over a dataset keeps: a fingerprint and a
// place per record, every answer confirmed against the line in the file, so
// it is exact in a few dozen bytes a record. And the tallies that replaced
// per-record lists in stats and the report give the same figures.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Int32List } from '../../src/core/typed-arrays.js';
import { RecordIdIndex } from '../../src/dataset/dataset-reader.js';
import { RecordIdChecks } from '../../src/dataset/report-viewer-data.js';
import { distribution, WholeNumbers } from '../../src/dataset/stats-distribution.js';

const dir = mkdtempSync(join(tmpdir(), 'record-id-index-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Writes lines to `file` in `dir` and indexes each, as a pass does. */
function indexed(file: string, lines: { id: string; text: string }[]): RecordIdIndex {
  writeFileSync(join(dir, file), lines.map((line) => `${line.text}\n`).join(''));
  const index = new RecordIdIndex(dir);
  let offset = 0;
  lines.forEach((line, number) => {
    const bytes = Buffer.byteLength(line.text);
    index.add(line.id, { file, line: number + 1, offset, bytes }, line.text);
    offset += bytes + 1;
  });
  return index;
}

describe('RecordIdIndex', () => {
  it('finds the place of every id, and no other id', () => {
    const lines = Array.from({ length: 3000 }, (_, index) => {
      const id = `lane.task-${index % 7}.s${index}${index % 11 === 0 ? '-é✓' : ''}`;
      return { id, text: JSON.stringify({ record_id: id, n: index }) };
    });
    const index = indexed('many.jsonl', lines);
    lines.forEach((line, number) => {
      assert.equal(index.get(line.id)?.line, number + 1, line.id);
      assert.equal(index.has(line.id), true);
    });
    for (const unknown of ['lane.task-0.s3000', '', 'lane.task-1.s1 ', '{"record_id"']) assert.equal(index.has(unknown), false, unknown);
  });

  it('keeps whole the ids of lines that do not start with them, and finds them too', () => {
    const lines = [
      { id: 'a', text: '{"record_id":"a","x":1}' },
      // Written by another tool, keys in another order: the head of the line cannot vouch for the id.
      { id: 'b', text: '{"x":2,"record_id":"b"}' },
      // The id is the last of two keys: the parsed record's id is not the one its head shows.
      { id: 'c', text: '{"record_id":"a","record_id":"c"}' },
    ];
    const index = indexed('orders.jsonl', lines);
    assert.equal(index.get('a')?.line, 1);
    assert.equal(index.get('b')?.line, 2);
    assert.equal(index.get('c')?.line, 3);
    assert.equal(index.has('d'), false);
  });

  it('trusts no fingerprint the file no longer confirms', () => {
    const index = indexed('changed.jsonl', [{ id: 'first', text: '{"record_id":"first","x":1}' }]);
    assert.equal(index.has('first'), true);
    writeFileSync(join(dir, 'changed.jsonl'), '{"record_id":"other","x":1}\n');
    assert.equal(index.has('first'), false, 'the line there is another record now');
  });
});

describe('the per-record lists replaced by tallies', () => {
  it('WholeNumbers gives the distribution of every value it was given', () => {
    const samples = [[], [0], [3, 3, 3], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], Array.from({ length: 2001 }, (_, index) => (index * 7919) % 97), [0, 40, 40, 1, 250, 3]];
    for (const values of samples) {
      const tally = new WholeNumbers();
      for (const value of values) tally.add(value);
      assert.deepEqual(tally.distribution(), distribution(values), JSON.stringify(values.slice(0, 10)));
    }
  });

  it('Int32List keeps what was pushed, across growth', () => {
    const list = new Int32List();
    for (let value = 0; value < 5000; value++) list.push(value * 3 - 7000);
    assert.equal(list.length, 5000);
    assert.equal(list.get(4999), 4999 * 3 - 7000);
    assert.deepEqual(list.first(3), [-7000, -6997, -6994]);
    assert.equal(list.first(10_000).length, 5000);
  });

  it('RecordIdChecks tells the record a line held from another', () => {
    const checks = new RecordIdChecks();
    checks.set(1, 'one');
    checks.set(5000, 'five thousand');
    assert.equal(checks.matches(1, 'one'), true);
    assert.equal(checks.matches(5000, 'five thousand'), true);
    assert.equal(checks.matches(1, 'two'), false);
    assert.equal(checks.matches(6000, 'one'), false, 'a line past the first pass');
  });
});
