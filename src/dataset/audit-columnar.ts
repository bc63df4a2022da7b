// Owns the audit's columnar check: episodes.arrow and episodes.parquet are
// derived from episodes.jsonl (and each data/ file's copies from its JSONL
// file, for a big dataset), so each must hold exactly its records, row for
// row and column for column. The JSONL is read line by line and every copy
// batch by batch, all in one pass, so memory stays flat however big the
// dataset; the manifest is not trusted for any of it.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { RecordBatch } from 'apache-arrow';
import { recordToRow } from '../records/arrow-schema.js';
import { readColumnarBatches, recordIdAt, rowDifference, schemaDifferences, type ExpectedRow } from '../records/columnar-rows.js';
import type { EpisodeRecord } from '../records/episode-record.js';
import { readLines } from '../records/jsonl.js';
import { recordFiles } from '../records/record-files.js';
import type { Finding } from './audit-checks.js';

/** Rows named one by one per copy; past this, one finding counts the rest. */
export const MAX_ROW_FINDINGS = 20;

export interface ColumnarProgress {
  files: string[];
  /** JSONL rows compared so far. */
  rows: number;
}

interface JsonlRow {
  line: number;
  recordId?: string;
  /** Undefined for a line that is not a record (the lines check names it); its row is then not compared. */
  expected?: ExpectedRow;
}

/** The rows a copy is written from: every whole, non-blank line, as the writer reads them. */
async function* jsonlRows(path: string): AsyncGenerator<JsonlRow> {
  for await (const line of readLines(path)) {
    if (!line.terminated || line.text.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line.text);
    } catch {
      yield { line: line.line };
      continue;
    }
    const recordId = typeof (value as { record_id?: unknown })?.record_id === 'string' ? (value as { record_id: string }).record_id : undefined;
    try {
      yield { line: line.line, recordId, expected: recordToRow(value as EpisodeRecord) };
    } catch {
      yield { line: line.line, recordId };
    }
  }
}

/** One copy being read alongside the JSONL: its batches, the position in them, and what it found. */
class CopyCursor {
  readonly findings: Finding[] = [];
  /** Rows read from the copy. */
  row = 0;
  differing = 0;
  /** Why the copy has no more rows to give: its end, a place it stops decoding, or columns that are not the record's. */
  stopped: 'end' | 'decode' | 'schema' | undefined;
  private batch: RecordBatch | undefined;
  private index = 0;
  private readonly batches: AsyncGenerator<RecordBatch>;

  constructor(readonly file: string, path: string, private readonly source: string) {
    this.batches = readColumnarBatches(path);
  }

  private found(where: string, reason: string): void {
    this.findings.push({ check: 'columnar', where, reason });
  }

  /** The next row of the copy, or undefined at its end or where it stops decoding (a finding, and the cursor is done). */
  async next(): Promise<{ batch: RecordBatch; index: number } | undefined> {
    if (this.stopped) return undefined;
    while (!this.batch || this.index >= this.batch.numRows) {
      let step: IteratorResult<RecordBatch>;
      try {
        step = await this.batches.next();
      } catch (error) {
        this.found(this.file, `does not decode after row ${this.row}: ${(error as Error).message}`);
        this.stopped = 'decode';
        return undefined;
      }
      if (step.done) {
        this.stopped = 'end';
        return undefined;
      }
      if (this.row === 0 && !this.batch) {
        const problems = schemaDifferences(step.value.schema.fields);
        if (problems.length > 0) {
          for (const problem of problems) this.found(this.file, `${problem}: not a copy of ${this.source}'s records`);
          this.stopped = 'schema';
          return undefined;
        }
      }
      this.batch = step.value;
      this.index = 0;
    }
    this.row++;
    return { batch: this.batch, index: this.index++ };
  }

  compare(at: { batch: RecordBatch; index: number }, source: JsonlRow): void {
    if (!source.expected) return;
    const difference = rowDifference(at.batch, at.index, source.expected);
    if (!difference) return;
    this.differing++;
    if (this.differing > MAX_ROW_FINDINGS) return;
    const id = source.recordId ?? '(no record_id)';
    this.found(
      `${this.file} row ${this.row - 1} (${id})`,
      `column ${difference.column} differs from ${this.source}:${source.line}: ${difference.actual} here, ${difference.expected} in ${this.source}`,
    );
  }

  /** After the JSONL ended: rows the copy lacks, or has beyond it. */
  async finish(jsonlRows: number, firstMissing: JsonlRow | undefined): Promise<void> {
    if (this.differing > MAX_ROW_FINDINGS) {
      this.found(this.file, `${this.differing - MAX_ROW_FINDINGS} more rows differ from ${this.source} (${this.differing} in all; the first ${MAX_ROW_FINDINGS} are named above)`);
    }
    if (this.stopped === 'end' && firstMissing) {
      this.found(`${this.file} row ${this.row}`, `the copy ends after ${this.row} rows, ${this.source} has ${jsonlRows}: records from line ${firstMissing.line} (${firstMissing.recordId ?? 'no record_id'}) on are missing`);
    }
    if (this.stopped) return;
    const first = await this.next();
    if (!first) return;
    const start = this.row - 1;
    const id = recordIdAt(first.batch, first.index);
    while (await this.next());
    if (this.stopped === 'decode') return;
    this.found(`${this.file} row ${start}${id ? ` (${id})` : ''}`, `the copy has ${this.row - start} more row${this.row - start === 1 ? '' : 's'} than ${this.source} (${this.row} against ${jsonlRows}): records that are not in ${this.source}`);
  }
}

/**
 * Compares every columnar copy present in `dir` with the JSONL it was written
 * from, row for row: episodes.arrow and episodes.parquet with episodes.jsonl,
 * or each data/ file's copies with its JSONL file. A copy that is absent is
 * not this check's business (the manifest check names a listed file that is
 * missing).
 */
export async function checkColumnarCopies(dir: string, options: { onProgress?: (progress: ColumnarProgress) => void } = {}): Promise<Finding[]> {
  const layout = recordFiles(dir);
  const findings: Finding[] = [];
  let rows = 0;
  for (const [index, source] of layout.jsonl.entries()) {
    const files = [layout.arrow[index], layout.parquet[index]].filter((file): file is string => file !== undefined && existsSync(join(dir, file)));
    if (files.length === 0) continue;
    const cursors = files.map((file) => new CopyCursor(file, join(dir, file), source));
    let fileRows = 0;
    const firstMissing = new Map<CopyCursor, JsonlRow>();
    for await (const row of jsonlRows(join(dir, source))) {
      rows++;
      fileRows++;
      for (const cursor of cursors) {
        const at = await cursor.next();
        if (at) cursor.compare(at, row);
        else if (!firstMissing.has(cursor)) firstMissing.set(cursor, row);
      }
      if (rows % 1000 === 0) options.onProgress?.({ files, rows });
    }
    for (const cursor of cursors) {
      await cursor.finish(fileRows, firstMissing.get(cursor));
      findings.push(...cursor.findings);
    }
  }
  return findings;
}
