// Owns reading a dataset directory for the dataset operations: every line of
// episodes.jsonl parsed and checked against the record schema, with each torn,
// corrupt or invalid line reported by file and line number instead of skipped.

import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { FactoryError } from '../core/errors.js';
import type { EpisodeRecord } from '../records/episode-record.js';
import { readLines } from '../records/jsonl.js';
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
 * what fits in memory.
 */
export async function* streamDataset(dir: string, file = EPISODES_FILE): AsyncGenerator<DatasetEntry> {
  const path = assertDatasetDirectory(dir, file);
  for await (const entry of readLines(path)) {
    const problem = (reason: string): DatasetEntry => ({ problem: { file, line: entry.line, reason } });
    if (!entry.terminated) {
      yield problem('torn last line (no newline: the writer was interrupted)');
      continue;
    }
    if (entry.text.trim() === '') {
      yield problem('blank line');
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(entry.text);
    } catch (error) {
      yield problem(`not valid JSON (${(error as Error).message})`);
      continue;
    }
    const errors = validateAgainst('episode-record.v1', value);
    if (errors.length > 0) {
      yield problem(`not a valid record: ${errors.slice(0, 3).map((error) => `${error.path || '/'}: ${error.reason}`).join('; ')}`);
      continue;
    }
    yield { row: { line: entry.line, record: value as EpisodeRecord, text: entry.text } };
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

/** For operations that must not work on part of a dataset: every unreadable line stops them, listed. */
export async function readWholeDataset(dir: string, operation: string, file = EPISODES_FILE): Promise<Dataset> {
  const dataset = await readDataset(dir, file);
  if (dataset.problems.length > 0) {
    throw new FactoryError('dataset_corrupt', `${dir} has ${dataset.problems.length} unreadable line${dataset.problems.length === 1 ? '' : 's'}; nothing was ${operation}`, {
      fix: 'run `episode-factory audit` on it, then regenerate or repair the listed lines',
      problems: dataset.problems.map((problem) => ({ where: `${problem.file}:${problem.line}`, reason: problem.reason })),
    });
  }
  return dataset;
}

export function formatProblem(problem: DatasetProblem): string {
  return `${problem.file}:${problem.line}: ${problem.reason}`;
}
