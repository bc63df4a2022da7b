// Reading the columnar copies back and comparing them with the records they
// were written from: equal copies compare equal, batch by batch; a changed
// value of any column type is named by its column; a copy whose columns are
// not the record's is named by column.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Field, Int32, Schema, Utf8 } from 'apache-arrow';
import { RECORD_FIELDS, recordToRow } from '../../src/records/arrow-schema.js';
import { writeColumnar } from '../../src/records/columnar-files.js';
import { readColumnarBatches, rowDifference, schemaDifferences } from '../../src/records/columnar-rows.js';
import type { EpisodeRecord } from '../../src/records/episode-record.js';
import { REPO_ROOT, temporaryDirectory } from '../helpers.js';

const SAMPLE = join(REPO_ROOT, 'datasets', 'tool-world-faults-v1', 'episodes.jsonl');
const records = () => readFileSync(SAMPLE, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as EpisodeRecord);

async function batchesOf(path: string) {
  const batches = [];
  for await (const batch of readColumnarBatches(path)) batches.push(batch);
  return batches;
}

describe('columnar rows against their records', () => {
  it('reads both copies batch by batch, with the record schema, and every row equals its record', { timeout: 60_000 }, async () => {
    const out = temporaryDirectory();
    await writeColumnar(SAMPLE, { arrow: join(out, 'e.arrow'), parquet: join(out, 'e.parquet') }, 16);
    const expected = records();
    for (const file of ['e.arrow', 'e.parquet']) {
      const batches = await batchesOf(join(out, file));
      assert.ok(batches.length >= 5, `${file}: read in batches, not as one table`);
      assert.deepEqual(schemaDifferences(batches[0]!.schema.fields), [], file);
      let row = 0;
      for (const batch of batches) {
        for (let index = 0; index < batch.numRows; index++, row++) assert.equal(rowDifference(batch, index, recordToRow(expected[row]!)), undefined, `${file} row ${row}`);
      }
      assert.equal(row, expected.length, file);
    }
  });

  it('names the first column that differs, for every column type, inside lists and structs', { timeout: 60_000 }, async () => {
    const out = temporaryDirectory();
    await writeColumnar(SAMPLE, { arrow: join(out, 'e.arrow') });
    const [batch] = await batchesOf(join(out, 'e.arrow'));
    const record = records()[3]!;
    const changed = (edit: (row: ReturnType<typeof recordToRow>) => void) => {
      const row = recordToRow(structuredClone(record));
      edit(row);
      return rowDifference(batch!, 3, row);
    };
    assert.deepEqual(changed((row) => (row.task.title += '!')), { column: 'task.title', expected: `"${record.task.title}!"`, actual: `"${record.task.title}"` });
    assert.equal(changed((row) => (row.result.steps += 1))?.column, 'result.steps');
    assert.equal(changed((row) => (row.result.task_completed = !row.result.task_completed))?.column, 'result.task_completed');
    assert.equal(changed((row) => (row.provenance.lineage.seed += 1n))?.column, 'provenance.lineage.seed');
    assert.equal(changed((row) => row.messages.pop())?.column, 'messages');
    assert.equal(changed((row) => (row.result.outcome_detail = 'edited'))?.column, 'result.outcome_detail');
    const tool = record.messages.findIndex((message) => message.role === 'tool');
    assert.equal(changed((row) => ((row.messages[tool]!.tool_result as { ok: boolean }).ok = !(row.messages[tool]!.tool_result as { ok: boolean }).ok))?.column, `messages[${tool}].tool_result.ok`);
    assert.equal(changed((row) => (row.task.tags = [...row.task.tags, 'extra']))?.column, 'task.tags');
    // A long text is quoted around its first difference, so a one-character edit shows.
    const long = changed((row) => (row.tools[0]!.description = row.tools[0]!.description.slice(0, 60) + '#' + row.tools[0]!.description.slice(61)));
    assert.equal(long?.column, 'tools[0].description');
    assert.ok(long!.expected.startsWith('"…') && long!.expected.includes('#'), long!.expected);
  });

  it('names the columns of a copy that is not a copy of the records', () => {
    const [recordId, family, ...rest] = RECORD_FIELDS;
    const retyped = new Field('family', new Int32(), false);
    assert.deepEqual(schemaDifferences(new Schema([recordId!, retyped, ...rest]).fields), ['column family is Int32, the record schema says Utf8']);
    assert.deepEqual(schemaDifferences([recordId!, family!, ...rest.slice(0, -1)]), ['column provenance is missing']);
    assert.deepEqual(schemaDifferences([...RECORD_FIELDS, new Field('note', new Utf8(), true)]), ['column note is not a column of the record schema']);
    const world = RECORD_FIELDS[3]!;
    assert.equal(world.name, 'world');
    assert.deepEqual(schemaDifferences([recordId!, family!, RECORD_FIELDS[2]!, new Field('world', new Utf8(), false), ...RECORD_FIELDS.slice(4)]), [
      'column world is Utf8, the record schema says Struct<{name:Utf8, version:Utf8}>',
    ]);
  });
});
