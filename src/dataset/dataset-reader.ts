// Owns reading a dataset directory for the dataset operations: every line of
// episodes.jsonl parsed and checked against the record schema, with each torn,
// corrupt or invalid line reported by file and line number instead of skipped.

import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { FactoryError } from '../core/errors.js';
import type { EpisodeRecord } from '../records/episode-record.js';
import { readJsonl } from '../records/jsonl.js';
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

export async function readDataset(dir: string, file = EPISODES_FILE): Promise<Dataset> {
  const path = assertDatasetDirectory(dir, file);
  const { rows, problems } = await readJsonl<EpisodeRecord>(path);
  const result: Dataset = { dir, file, rows: [], problems: problems.map((problem) => ({ file, line: problem.line, reason: problem.reason })) };
  for (const row of rows) {
    const errors = validateAgainst('episode-record.v1', row.value);
    if (errors.length > 0) {
      result.problems.push({ file, line: row.line, reason: `not a valid record: ${errors.slice(0, 3).map((error) => `${error.path || '/'}: ${error.reason}`).join('; ')}` });
      continue;
    }
    result.rows.push({ line: row.line, record: row.value, text: row.text });
  }
  result.problems.sort((left, right) => left.line - right.line);
  return result;
}

/** For operations that must not work on part of a dataset: every unreadable line stops them, listed. */
export async function readWholeDataset(dir: string, operation: string): Promise<Dataset> {
  const dataset = await readDataset(dir);
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
