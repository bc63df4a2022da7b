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
import { type ColumnRange, rebatchRanges } from '../records/arrow-concatenation.js';
import { BATCH_ROWS, recordBatches, writeColumnarBatches, type ColumnarOutputs } from '../records/columnar-files.js';
import type { EpisodeRecord } from '../records/episode-record.js';
import { FileCutter } from '../records/record-files.js';
import { partArrowFile, partFile, type PartSummary } from './run-parts.js';

function partBatches(staging: string, part: PartSummary): RecordBatch[] {
  if (part.files.arrow !== undefined) return tableFromIPC(readFileSync(partArrowFile(staging, part))).batches;
  const lines = readFileSync(partFile(staging, part, 'episodes'), 'utf8').split('\n');
  return [...recordBatches(lines.filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as EpisodeRecord))];
}

/** The size of each line of a part's JSONL, its newline counted: where the dataset's files are cut depends on these alone. */
export function lineSizes(path: string): number[] {
  const bytes = readFileSync(path);
  const sizes: number[] = [];
  let start = 0;
  for (let index = bytes.indexOf(0x0a); index >= 0; index = bytes.indexOf(0x0a, index + 1)) {
    sizes.push(index + 1 - start);
    start = index + 1;
  }
  if (start < bytes.length) sizes.push(bytes.length - start);
  return sizes;
}

class Abandoned extends Error {}

/**
 * Feeds sealed parts, in any order, to the columnar files, which take them in
 * plan order from `start` to `end`. The rows are cut into files as the JSONL
 * is (FileCutter over each record's line size), file `n` written to
 * `outputsFor(n)`: one file for a dataset within the bound, several beyond it.
 */
export class ColumnarPartWriter {
  private readonly sealed = new Map<number, PartSummary>();
  private cursor: number;
  private wake: (() => void) | undefined;
  private abandoned = false;
  private readonly written: Promise<number[]>;
  private readonly paths: string[] = [];

  constructor(
    private readonly staging: string,
    start: number,
    private readonly end: number,
    private readonly outputsFor: (file: number) => ColumnarOutputs,
    private readonly maxFileBytes: number,
  ) {
    this.cursor = start;
    this.written = this.writeFiles();
    // Seen by finish(); until then a failure must not surface as an unhandled rejection.
    this.written.catch(() => undefined);
  }

  /** A part is sealed (or was kept from an interrupted run). */
  add(part: PartSummary): void {
    this.sealed.set(part.start, part);
    this.wake?.();
  }

  /** Every part is in: the rows of each file written, once the files are complete. */
  async finish(): Promise<number[]> {
    if (this.abandoned) throw new Error('the columnar files were abandoned: the run stopped before its end');
    return this.written;
  }

  /** The run stopped before its end: the files are removed, to be written again by --resume. */
  async abandon(): Promise<void> {
    this.abandoned = true;
    this.wake?.();
    await this.written.catch(() => undefined);
    for (const path of this.paths) rmSync(path, { force: true });
  }

  private async writeFiles(): Promise<number[]> {
    const source = this.ranges();
    let next = await source.next();
    const rowsPerFile: number[] = [];
    for (let file = 0; ; file++) {
      let rows = 0;
      const fileRanges = async function* (): AsyncGenerator<ColumnRange> {
        while (!next.done && next.value.file === file) {
          rows += next.value.range.end - next.value.range.start;
          yield next.value.range;
          next = await source.next();
        }
      };
      const outputs = this.outputsFor(file);
      for (const path of [outputs.arrow, outputs.parquet]) if (path) this.paths.push(path);
      await writeColumnarBatches(rebatchRanges(fileRanges(), BATCH_ROWS), outputs);
      rowsPerFile.push(rows);
      if (next.done) return rowsPerFile;
    }
  }

  /** Every row in plan order, as ranges of the parts' batches, each with the file it goes to. */
  private async *ranges(): AsyncGenerator<{ file: number; range: ColumnRange }> {
    const cutter = new FileCutter(this.maxFileBytes);
    let file = 0;
    for await (const part of this.inOrder()) {
      const sizes = lineSizes(partFile(this.staging, part, 'episodes'));
      let row = 0;
      for (const batch of partBatches(this.staging, part)) {
        let start = 0;
        for (let index = 0; index < batch.numRows; index++) {
          if (!cutter.take(sizes[row++] ?? 0)) continue;
          if (index > start) yield { file, range: { data: batch.data, start, end: index } };
          file++;
          start = index;
        }
        if (batch.numRows > start) yield { file, range: { data: batch.data, start, end: batch.numRows } };
      }
      if (row !== sizes.length) throw new Error(`part ${part.start}..${part.end} has ${sizes.length} lines of JSONL and ${row} rows of columns`);
    }
  }

  private async *inOrder(): AsyncGenerator<PartSummary> {
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
      yield part;
    }
  }
}
