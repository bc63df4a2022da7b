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
import { writePart, type PartSummary } from '../../src/generation/run-parts.js';
import { RecordBatchBuilder } from '../../src/records/arrow-builders.js';
import { recordToRow } from '../../src/records/arrow-schema.js';
import { ipcStream } from '../../src/records/arrow-ipc.js';
import { writeColumnar } from '../../src/records/columnar-files.js';
import type { EpisodeRecord } from '../../src/records/episode-record.js';
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
    const writer = new ColumnarPartWriter(staging, 0, lines.length, outputs);
    // The last part first, then the rest back to front, with the event loop turning between them.
    for (const part of [...parts].reverse()) {
      writer.add(part);
      await sleep(1);
    }
    assert.equal(await writer.finish(), lines.length);
    const reference = temporaryDirectory();
    await writeColumnar(SAMPLE, { arrow: join(reference, 'e.arrow'), parquet: join(reference, 'e.parquet') }, 1000);
    assert.ok(readFileSync(outputs.arrow).equals(readFileSync(join(reference, 'e.arrow'))), 'Arrow bytes');
    assert.ok(readFileSync(outputs.parquet).equals(readFileSync(join(reference, 'e.parquet'))), 'Parquet bytes');
  });

  it('abandons the files when the run stops before its end, without waiting for parts that never come', async () => {
    const staging = temporaryDirectory();
    const parts = sealParts(staging, 5);
    const outputs = { arrow: join(staging, 'episodes.arrow'), parquet: join(staging, 'episodes.parquet') };
    const writer = new ColumnarPartWriter(staging, 0, lines.length, outputs);
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
    const writer = new ColumnarPartWriter(staging, 0, 1, { arrow: join(staging, 'episodes.arrow') });
    writer.add({ ...part!, start: 0, end: 1 });
    await assert.rejects(writer.finish(), /ENOENT/);
  });
});
