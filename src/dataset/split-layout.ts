// Owns reading a dataset's split layout (split.json): which file holds which
// split. A layout that names a missing file is refused rather than ignored,
// since the card and the exports would send loaders to it.

import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { errorMessage, FactoryError } from '../core/errors.js';
import { expandRecordPath } from '../records/record-files.js';
import { compareKeys } from './key-order.js';
import { SPLIT_FILE, SPLIT_FORMAT } from './dataset-split.js';

export interface CardSplit {
  name: string;
  path: string;
  rows: number;
  tasks?: string[];
}

export interface SplitLayout {
  test_fraction: number | null;
  splits: CardSplit[];
}

function splitProblem(dir: string, reason: string): FactoryError {
  return new FactoryError('dataset_not_found', `${join(dir, SPLIT_FILE)} is not a usable split layout: ${reason}`, {
    fix: `rerun \`episode-factory split ${dir}\`, or delete ${SPLIT_FILE} to describe episodes.jsonl as the only split`,
  });
}

/** Train first and test last, as readers expect; any other split between, by name. */
function splitOrder(name: string): number {
  return name === 'train' ? 0 : name === 'validation' ? 1 : name === 'test' ? 3 : 2;
}

/**
 * Reads dir/split.json when there is one. A layout that names a missing file
 * is refused rather than ignored: the card would send loaders to it.
 */
export function readSplitLayout(dir: string): SplitLayout | null {
  const path = join(dir, SPLIT_FILE);
  if (!existsSync(path)) return null;
  let document: unknown;
  try {
    document = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw splitProblem(dir, `not valid JSON (${errorMessage(error)})`);
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) throw splitProblem(dir, 'not a JSON object');
  const layout = document as { format?: unknown; test_fraction?: unknown; splits?: unknown };
  if (layout.format !== SPLIT_FORMAT) throw splitProblem(dir, `format is ${JSON.stringify(layout.format)}, expected "${SPLIT_FORMAT}"`);
  if (typeof layout.splits !== 'object' || layout.splits === null || Array.isArray(layout.splits)) throw splitProblem(dir, '"splits" is not an object');
  const splits: CardSplit[] = [];
  for (const [name, value] of Object.entries(layout.splits as Record<string, unknown>)) {
    const split = value as { path?: unknown; rows?: unknown; tasks?: unknown } | null;
    if (typeof split !== 'object' || split === null) throw splitProblem(dir, `split "${name}" is not an object`);
    if (typeof split.path !== 'string' || split.path === '' || isAbsolute(split.path) || split.path.split(/[\\/]/).includes('..')) {
      throw splitProblem(dir, `split "${name}" needs a "path" inside the directory`);
    }
    if (typeof split.rows !== 'number' || !Number.isInteger(split.rows) || split.rows < 0) throw splitProblem(dir, `split "${name}" needs an integer "rows"`);
    if (split.path.includes('*')) {
      try {
        expandRecordPath(dir, split.path);
      } catch (error) {
        throw splitProblem(dir, `split "${name}": ${errorMessage(error).replace(`${dir}: `, '')}`);
      }
    } else if (!existsSync(join(dir, split.path))) throw splitProblem(dir, `split "${name}" names ${split.path}, which is not there`);
    const entry: CardSplit = { name, path: split.path, rows: split.rows };
    if (Array.isArray(split.tasks)) entry.tasks = [...new Set(split.tasks.map(String))].sort(compareKeys);
    splits.push(entry);
  }
  if (splits.length === 0) throw splitProblem(dir, 'it names no split');
  splits.sort((left, right) => splitOrder(left.name) - splitOrder(right.name) || compareKeys(left.name, right.name));
  return { test_fraction: typeof layout.test_fraction === 'number' ? layout.test_fraction : null, splits };
}

