import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { RecordBatch, RecordBatchReader, RecordBatchStreamWriter, tableFromIPC, vectorFromArray } from 'apache-arrow';
import * as parquet from 'parquet-wasm';
import { RECORD_ARROW_SCHEMA, RECORD_STRUCT, recordToRow } from '../../src/records/arrow-schema.js';
import { writeColumnar } from '../../src/records/columnar-files.js';
import type { EpisodeRecord } from '../../src/records/episode-record.js';
import { REPO_ROOT, temporaryDirectory } from '../helpers.js';

const SAMPLE = join(REPO_ROOT, 'datasets', 'tool-world-faults-v1', 'episodes.jsonl');
const records = () => readFileSync(SAMPLE, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as EpisodeRecord);
const plain = (value: unknown) => JSON.parse(JSON.stringify(value, (_key, item) => (typeof item === 'bigint' ? Number(item) : item)));

function parquetRows(path: string): unknown[] {
  const table = parquet.readParquet(readFileSync(path));
  return tableFromIPC(table.intoIPCStream()).toArray().map((row) => plain(row.toJSON()));
}

describe('Arrow and Parquet copies of a dataset', () => {
  it('hold the same rows as episodes.jsonl, in order, with nested columns', async () => {
    const out = temporaryDirectory();
    const rows = await writeColumnar(SAMPLE, { arrow: join(out, 'e.arrow'), parquet: join(out, 'e.parquet') }, 16);
    const expected = records().map((record) => plain(recordToRow(record)));
    assert.equal(rows, expected.length);
    const arrow = tableFromIPC(readFileSync(join(out, 'e.arrow')));
    assert.equal(String(arrow.schema), String(RECORD_ARROW_SCHEMA));
    assert.deepEqual(arrow.toArray().map((row) => plain(row.toJSON())), expected);
    assert.deepEqual(parquetRows(join(out, 'e.parquet')), expected);
    const first = arrow.get(0)!.toJSON() as any;
    assert.equal(typeof first.messages.get(2).tool_calls.get(0).arguments, 'string', 'arguments are JSON text');
  });

  it('write one batch (and one Parquet row group) per batch of rows, so memory does not grow with the dataset', async () => {
    const out = temporaryDirectory();
    await writeColumnar(SAMPLE, { arrow: join(out, 'e.arrow'), parquet: join(out, 'e.parquet') }, 16);
    const batches = [...RecordBatchReader.from(readFileSync(join(out, 'e.arrow')))].map((batch) => batch.numRows);
    assert.deepEqual(batches, [16, 16, 16, 16, 16]);
    const file = await parquet.ParquetFile.fromFile(new Blob([readFileSync(join(out, 'e.parquet'))]));
    assert.equal(file.metadata().numRowGroups(), 5);
  });

  it('are byte-identical when written again', async () => {
    const first = temporaryDirectory();
    const second = temporaryDirectory();
    for (const out of [first, second]) await writeColumnar(SAMPLE, { arrow: join(out, 'e.arrow'), parquet: join(out, 'e.parquet') });
    for (const file of ['e.arrow', 'e.parquet']) assert.ok(readFileSync(join(first, file)).equals(readFileSync(join(second, file))), file);
  });

  it('write the Arrow stream apache-arrow writes from row-wise vectors, byte for byte', async () => {
    const out = temporaryDirectory();
    await writeColumnar(SAMPLE, { arrow: join(out, 'e.arrow'), parquet: join(out, 'e.parquet') }, 16);
    const rows = records().map(recordToRow);
    const batches: RecordBatch[] = [];
    for (let start = 0; start < rows.length; start += 16) batches.push(new RecordBatch(RECORD_ARROW_SCHEMA, vectorFromArray(rows.slice(start, start + 16), RECORD_STRUCT).data[0]!));
    assert.ok(readFileSync(join(out, 'e.arrow')).equals(Buffer.from(RecordBatchStreamWriter.writeAll(batches).toUint8Array(true))));
  });

  it('keep an Arrow stream readable up to its last whole batch when the file is cut short', async () => {
    const out = temporaryDirectory();
    await writeColumnar(SAMPLE, { arrow: join(out, 'e.arrow') }, 20);
    const bytes = readFileSync(join(out, 'e.arrow'));
    writeFileSync(join(out, 'cut.arrow'), bytes.subarray(0, Math.floor(bytes.length * 0.7)));
    let rows = 0;
    assert.throws(() => {
      for (const batch of RecordBatchReader.from(readFileSync(join(out, 'cut.arrow')))) rows += batch.numRows;
    });
    assert.ok(rows >= 20 && rows < 80 && rows % 20 === 0, `${rows} rows read before the cut`);
  });

  it('carry the schema even for an empty dataset', async () => {
    const out = temporaryDirectory();
    writeFileSync(join(out, 'empty.jsonl'), '');
    assert.equal(await writeColumnar(join(out, 'empty.jsonl'), { arrow: join(out, 'e.arrow'), parquet: join(out, 'e.parquet') }), 0);
    const arrow = tableFromIPC(readFileSync(join(out, 'e.arrow')));
    assert.equal(arrow.numRows, 0);
    assert.equal(String(arrow.schema), String(RECORD_ARROW_SCHEMA));
    assert.deepEqual(parquetRows(join(out, 'e.parquet')), []);
  });
});
