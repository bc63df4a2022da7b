// Owns writing a run's columnar copies from its sealed parts, while the run is
// still going. Each part's rows were built into Arrow columns by whichever
// thread produced it; this side takes the parts in plan order as soon as the
// next one is sealed, cuts their columns into the dataset's 1,000-row batches
// and appends them to Arrow and Parquet, parsing no JSON. The main thread is
// otherwise idle while workers run, so only the last part's rows are left to
// write when the run ends. A part sealed without columns (by a run resumed
// across the change) has its rows built from its JSONL here.
//
// The files are written into staging and published only with the whole run;
// a run stopped early abandons them, and --resume writes them again.

import { readFileSync, rmSync } from 'node:fs';
import { type RecordBatch, tableFromIPC } from 'apache-arrow';
import { rebatch } from '../records/arrow-concatenation.js';
import { BATCH_ROWS, recordBatches, writeColumnarBatches, type ColumnarOutputs } from '../records/columnar-files.js';
import type { EpisodeRecord } from '../records/episode-record.js';
import { partArrowFile, partFile, type PartSummary } from './run-parts.js';

function partBatches(staging: string, part: PartSummary): RecordBatch[] {
  if (part.files.arrow !== undefined) return tableFromIPC(readFileSync(partArrowFile(staging, part))).batches;
  const lines = readFileSync(partFile(staging, part, 'episodes'), 'utf8').split('\n');
  return [...recordBatches(lines.filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as EpisodeRecord))];
}

class Abandoned extends Error {}

/** Feeds sealed parts, in any order, to the columnar files, which take them in plan order from `start` to `end`. */
export class ColumnarPartWriter {
  private readonly sealed = new Map<number, PartSummary>();
  private cursor: number;
  private wake: (() => void) | undefined;
  private abandoned = false;
  private readonly written: Promise<number>;

  constructor(
    private readonly staging: string,
    start: number,
    private readonly end: number,
    private readonly outputs: ColumnarOutputs,
  ) {
    this.cursor = start;
    this.written = writeColumnarBatches(rebatch(this.inOrder(), BATCH_ROWS), outputs);
    // Seen by finish(); until then a failure must not surface as an unhandled rejection.
    this.written.catch(() => undefined);
  }

  /** A part is sealed (or was kept from an interrupted run). */
  add(part: PartSummary): void {
    this.sealed.set(part.start, part);
    this.wake?.();
  }

  /** Every part is in: the rows of the run, once the files are complete. */
  async finish(): Promise<number> {
    if (this.abandoned) throw new Error('the columnar files were abandoned: the run stopped before its end');
    return this.written;
  }

  /** The run stopped before its end: the files are removed, to be written again by --resume. */
  async abandon(): Promise<void> {
    this.abandoned = true;
    this.wake?.();
    await this.written.catch(() => undefined);
    for (const path of [this.outputs.arrow, this.outputs.parquet]) if (path) rmSync(path, { force: true });
  }

  private async *inOrder(): AsyncGenerator<RecordBatch> {
    while (this.cursor < this.end) {
      const part = this.sealed.get(this.cursor);
      if (this.abandoned) throw new Abandoned('the run stopped before its end');
      if (!part) {
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
        continue;
      }
      this.sealed.delete(part.start);
      this.cursor = part.end;
      yield* partBatches(this.staging, part);
    }
  }
}
