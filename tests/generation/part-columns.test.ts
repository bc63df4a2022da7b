// The columnar files of a run are written from its sealed parts while the run
// goes on: parts arrive in any order (whichever worker finished first) and
// must come out in plan order, as the bytes of the rows written in one go;
// a run that stops early leaves no half-written copy behind.

import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { ColumnarPartWriter } from '../../src/generation/part-columns.js';
import { PartTraceArchive } from '../../src/generation/part-trace-archive.js';
import { partFile, writePart, type PartSummary } from '../../src/generation/run-parts.js';
import { RecordBatchBuilder } from '../../src/records/arrow-builders.js';
import { recordToRow } from '../../src/records/arrow-schema.js';
import { ipcStream } from '../../src/records/arrow-ipc.js';
import { writeColumnar } from '../../src/records/columnar-files.js';
import type { EpisodeRecord } from '../../src/records/episode-record.js';
import { stagedRecordFile, writeRecordFiles } from '../../src/records/record-files.js';
import { REPO_ROOT, temporaryDirectory } from '../helpers.js';

const SAMPLE = join(REPO_ROOT, 'datasets', 'tool-world-faults-v1', 'episodes.jsonl');
const lines = readFileSync(SAMPLE, 'utf8').trim().split('\n');

/** The sample cut into parts of `size` plan episodes (one record each), sealed with their Arrow columns; every third without, as an older run sealed them. */
function sealParts(staging: string, size: number): PartSummary[] {
  const parts: PartSummary[] = [];
  for (let start = 0; start < lines.length; start += size) {
    const chunk = lines.slice(start, start + size);
    const builder = new RecordBatchBuilder();
    for (const line of chunk) builder.append(recordToRow(JSON.parse(line) as EpisodeRecord));
    const columns = parts.length % 3 === 2 ? undefined : ipcStream(builder.finishBatch());
    const summary = { start, end: start + chunk.length, written: chunk.length, rejected: 0, completed: 0, faults_fired: {}, rejections: [] };
    parts.push(writePart(staging, summary, chunk, [], new PartTraceArchive(staging, summary.start, summary.end, false).seal(summary.end), columns));
  }
  return parts;
}

describe('columnar copies written from parts as they are sealed', () => {
  it('takes parts in any order and writes the bytes of the whole file written from its JSONL', async () => {
    const staging = temporaryDirectory();
    const parts = sealParts(staging, 7);
    assert.ok(parts.length >= 4);
    const outputs = { arrow: join(staging, 'episodes.arrow'), parquet: join(staging, 'episodes.parquet') };
    const writer = new ColumnarPartWriter(staging, 0, lines.length, () => outputs, Number.MAX_SAFE_INTEGER);
    // The last part first, then the rest back to front, with the event loop turning between them.
    for (const part of [...parts].reverse()) {
      writer.add(part);
      await sleep(1);
    }
    assert.deepEqual(await writer.finish(), [lines.length]);
    const reference = temporaryDirectory();
    await writeColumnar(SAMPLE, { arrow: join(reference, 'e.arrow'), parquet: join(reference, 'e.parquet') }, 1000);
    assert.ok(readFileSync(outputs.arrow).equals(readFileSync(join(reference, 'e.arrow'))), 'Arrow bytes');
    assert.ok(readFileSync(outputs.parquet).equals(readFileSync(join(reference, 'e.parquet'))), 'Parquet bytes');
  });

  it('cuts the rows into files where the JSONL is cut, each the bytes of that file written from its own lines', async () => {
    const staging = temporaryDirectory();
    const parts = sealParts(staging, 4);
    const total = lines.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0);
    // About a third of the records a file, so cuts fall inside parts and between them.
    const bound = Math.ceil(total / 3);
    const paths = (file: number, format: 'jsonl' | 'arrow' | 'parquet') => stagedRecordFile(staging, file, format);
    const writer = new ColumnarPartWriter(staging, 0, lines.length, (file) => ({ arrow: paths(file, 'arrow'), parquet: paths(file, 'parquet') }), bound);
    for (const part of [...parts].reverse()) writer.add(part);
    const columnRows = await writer.finish();
    const jsonlRows = writeRecordFiles(parts.map((part) => partFile(staging, part, 'episodes')), (file) => paths(file, 'jsonl'), bound);
    assert.deepEqual(columnRows, jsonlRows);
    assert.ok(jsonlRows.length >= 3, `${jsonlRows.length} files`);
    assert.equal(jsonlRows.reduce((sum, rows) => sum + rows, 0), lines.length);
    let line = 0;
    for (const [file, rows] of jsonlRows.entries()) {
      const text = readFileSync(paths(file, 'jsonl'), 'utf8');
      assert.equal(text, lines.slice(line, line + rows).map((each) => each + '\n').join(''), `file ${file} holds its run of lines`);
      assert.ok(Buffer.byteLength(text) <= bound, `file ${file} is within the bound`);
      line += rows;
      const reference = temporaryDirectory();
      await writeColumnar(paths(file, 'jsonl'), { arrow: join(reference, 'e.arrow'), parquet: join(reference, 'e.parquet') }, 1000);
      assert.ok(readFileSync(paths(file, 'arrow')).equals(readFileSync(join(reference, 'e.arrow'))), `file ${file}: Arrow bytes`);
      assert.ok(readFileSync(paths(file, 'parquet')).equals(readFileSync(join(reference, 'e.parquet'))), `file ${file}: Parquet bytes`);
    }
  });

  it('abandons the files when the run stops before its end, without waiting for parts that never come', async () => {
    const staging = temporaryDirectory();
    const parts = sealParts(staging, 5);
    const outputs = { arrow: join(staging, 'episodes.arrow'), parquet: join(staging, 'episodes.parquet') };
    const writer = new ColumnarPartWriter(staging, 0, lines.length, () => outputs, Number.MAX_SAFE_INTEGER);
    writer.add(parts[0]!);
    writer.add(parts[2]!);
    await sleep(20);
    await writer.abandon();
    assert.equal(existsSync(outputs.arrow), false);
    assert.equal(existsSync(outputs.parquet), false);
    await assert.rejects(writer.finish(), /abandoned: the run stopped before its end/);
  });

  it('reports a part whose columns cannot be read when the files are finished', async () => {
    const staging = temporaryDirectory();
    const [part] = sealParts(staging, lines.length);
    // A marker that claims columns at a path where there are none.
    const writer = new ColumnarPartWriter(staging, 0, 1, () => ({ arrow: join(staging, 'episodes.arrow') }), Number.MAX_SAFE_INTEGER);
    writer.add({ ...part!, start: 0, end: 1 });
    await assert.rejects(writer.finish(), /ENOENT/);
  });
});
