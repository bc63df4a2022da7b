// Owns reading a dataset directory for the dataset operations: every line of
// episodes.jsonl decoded as strict UTF-8, parsed within the nesting limit and
// checked against the record schema, and every record_id checked against the
// lines before it, with each torn, corrupt or invalid line, and each id that
// comes back with other bytes, reported by file and line number instead of
// skipped or passed on.

import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { MAX_RECORD_DEPTH, parseBoundedJson } from '../core/bounded-json.js';
import { FactoryError } from '../core/errors.js';
import { sha256Hex } from '../core/hashing.js';
import type { EpisodeRecord } from '../records/episode-record.js';
import { jsonLineProblem, lineProblem, readLines } from '../records/jsonl.js';
import { validateAgainst } from '../records/schema-registry.js';

export const EPISODES_FILE = 'episodes.jsonl';

export interface DatasetRow {
  line: number;
  record: EpisodeRecord;
  /** The exact bytes of the line. */
  text: string;
}

export interface DatasetProblem {
  file: string;
  line: number;
  reason: string;
  /**
   * Set when the line is a valid record whose record_id an earlier line holds
   * with other bytes: one of the two was altered (or two datasets were mixed),
   * which is tampering, not damage.
   */
  conflict?: { record_id: string; line: number };
}

export interface Dataset {
  dir: string;
  file: string;
  rows: DatasetRow[];
  problems: DatasetProblem[];
}

export function assertDatasetDirectory(dir: string, file = EPISODES_FILE): string {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new FactoryError('dataset_not_found', `${dir} is not a directory`, { fix: 'pass a directory written by `episode-factory generate`, e.g. datasets/tool-world-v1' });
  }
  const path = join(dir, file);
  if (!existsSync(path)) {
    throw new FactoryError('dataset_not_found', `${dir} has no ${file}`, { fix: `run \`episode-factory generate <lane> --out ${dir}\` first` });
  }
  return path;
}

export type DatasetEntry = { row: DatasetRow; problem?: never } | { problem: DatasetProblem; row?: never };

/**
 * Every line of the file in order, each either a valid record or a problem,
 * without holding the file: for operations (the report) that must scale past
 * what fits in memory. Only each record_id's line and a hash of its bytes are
 * kept, to tell a repeated record from an altered one.
 */
export async function* streamDataset(dir: string, file = EPISODES_FILE): AsyncGenerator<DatasetEntry> {
  const path = assertDatasetDirectory(dir, file);
  const seen = new Map<string, { line: number; sha256: string }>();
  for await (const entry of readLines(path)) {
    const problem = (reason: string): DatasetEntry => ({ problem: { file, line: entry.line, reason } });
    const unreadable = lineProblem(entry);
    if (unreadable !== undefined) {
      yield problem(unreadable);
      continue;
    }
    let value: unknown;
    try {
      value = parseBoundedJson(entry.text, { maxDepth: MAX_RECORD_DEPTH, where: 'the line' });
    } catch (error) {
      yield problem(jsonLineProblem(error));
      continue;
    }
    const errors = validateAgainst('episode-record.v1', value);
    if (errors.length > 0) {
      yield problem(`not a valid record: ${errors.slice(0, 3).map((error) => `${error.path || '/'}: ${error.reason}`).join('; ')}`);
      continue;
    }
    const record = value as EpisodeRecord;
    const sha256 = sha256Hex(entry.text);
    const earlier = seen.get(record.record_id);
    // The same bytes again are an exact duplicate (dedup's to drop); other bytes under the same id are not.
    if (earlier === undefined || earlier.sha256 === sha256) {
      if (earlier === undefined) seen.set(record.record_id, { line: entry.line, sha256 });
      yield { row: { line: entry.line, record, text: entry.text } };
    } else {
      yield {
        problem: {
          file,
          line: entry.line,
          reason: `record_id ${record.record_id} is also on line ${earlier.line} with different content: one of them was altered, or two datasets were mixed`,
          conflict: { record_id: record.record_id, line: earlier.line },
        },
      };
    }
  }
}

export async function readDataset(dir: string, file = EPISODES_FILE): Promise<Dataset> {
  const result: Dataset = { dir, file, rows: [], problems: [] };
  for await (const entry of streamDataset(dir, file)) {
    if (entry.row) result.rows.push(entry.row);
    else result.problems.push(entry.problem);
  }
  return result;
}

/**
 * The error that stops an operation on a dataset with problems: tampering
 * (a record_id with two contents) is a failed check, exit 1; unreadable lines
 * are a precondition, exit 2. Every problem is listed.
 */
export function datasetProblemsError(dir: string, problems: readonly DatasetProblem[], operation: string): FactoryError {
  const listed = problems.map((problem) => ({ where: `${join(dir, problem.file)}:${problem.line}`, reason: problem.reason }));
  const conflicts = problems.filter((problem) => problem.conflict !== undefined).length;
  if (conflicts > 0) {
    return new FactoryError('dataset_tampered', `${dir} has ${conflicts} record_id${conflicts === 1 ? '' : 's'} whose lines differ from an earlier line with the same id; nothing was ${operation}`, {
      fix: 'run `episode-factory audit` on it, then regenerate the dataset (or restore it from the run that wrote it)',
      problems: listed,
    });
  }
  return new FactoryError('dataset_corrupt', `${dir} has ${problems.length} unreadable line${problems.length === 1 ? '' : 's'}; nothing was ${operation}`, {
    fix: 'run `episode-factory audit` on it, then regenerate or repair the listed lines',
    problems: listed,
  });
}

/** For operations that must not work on part of a dataset: every unreadable or conflicting line stops them, listed. */
export async function readWholeDataset(dir: string, operation: string, file = EPISODES_FILE): Promise<Dataset> {
  const dataset = await readDataset(dir, file);
  if (dataset.problems.length > 0) throw datasetProblemsError(dir, dataset.problems, operation);
  return dataset;
}

export function formatProblem(problem: DatasetProblem): string {
  return `${problem.file}:${problem.line}: ${problem.reason}`;
}
