// Owns writing a run's columnar copies from its sealed parts: each part's rows
// were built into Arrow columns by whichever thread produced it, so this side
// reads those columns back, cuts them into the dataset's 1,000-row batches
// and writes Arrow and Parquet, parsing no JSON. A part sealed without columns
// (a run resumed across the change) has its rows built from its JSONL here.

import { readFileSync } from 'node:fs';
import { type RecordBatch, tableFromIPC } from 'apache-arrow';
import { rebatch } from '../records/arrow-concatenation.js';
import { BATCH_ROWS, recordBatches, writeColumnarBatches, type ColumnarOutputs } from '../records/columnar-files.js';
import type { EpisodeRecord } from '../records/episode-record.js';
import { partArrowFile, partFile, type PartSummary } from './run-parts.js';

function* partRows(staging: string, parts: readonly PartSummary[]): Generator<RecordBatch> {
  for (const part of parts) {
    if (part.files.arrow !== undefined) {
      yield* tableFromIPC(readFileSync(partArrowFile(staging, part))).batches;
    } else {
      const lines = readFileSync(partFile(staging, part, 'episodes'), 'utf8').split('\n');
      yield* recordBatches(lines.filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as EpisodeRecord));
    }
  }
}

/** Writes the parts' rows, in plan order, as Arrow and/or Parquet. Returns the number of rows. */
export async function writeColumnarFromParts(staging: string, parts: readonly PartSummary[], outputs: ColumnarOutputs): Promise<number> {
  return writeColumnarBatches(rebatch(partRows(staging, parts), BATCH_ROWS), outputs);
}
