// Owns `split`: a deterministic train/test split by task, never by episode, so
// no task is seen in both. Which tasks go to test is decided by a hash of the
// lane and task names alone, so adding seeds never moves a task. Records are
// copied line for line, bytes unchanged. Two passes in bounded memory: the
// first gathers the task names (the split needs them all), the second copies
// each line to its side. Both files are written under temporary names and
// moved into place only when every line was read, so a dataset with an
// unreadable line keeps its earlier split.

import { join } from 'node:path';
import { rmSync, writeFileSync } from 'node:fs';
import { FactoryError } from '../core/errors.js';
import { sha256Hex } from '../core/hashing.js';
import { moveIntoPlace, temporaryPathFor } from '../records/atomic-file.js';
import { JsonlAppender } from '../records/jsonl.js';
import { passOverDataset, type PassOptions } from './dataset-reader.js';

export const SPLIT_FORMAT = 'episode-factory.split.v1';
export const SPLIT_FILE = 'split.json';
export const TRAIN_FILE = 'train.jsonl';
export const TEST_FILE = 'test.jsonl';

export interface SplitSummary {
  format: typeof SPLIT_FORMAT;
  test_fraction: number;
  splits: {
    train: { path: string; rows: number; tasks: string[] };
    test: { path: string; rows: number; tasks: string[] };
  };
}

const taskKey = (lane: string, task: string) => `${lane}/${task}`;

/** Tasks ordered by a hash of their names; the first ones go to test. */
export function testTasks(tasks: readonly string[], fraction: number): Set<string> {
  if (!(fraction >= 0 && fraction < 1)) {
    throw new FactoryError('usage', `--test ${fraction} is not a fraction in [0, 1)`, { fix: 'pass e.g. --test 0.1 (a tenth of the tasks go to test)' });
  }
  const ordered = [...tasks].sort((left, right) => {
    const [a, b] = [sha256Hex(`split\u0000${left}`), sha256Hex(`split\u0000${right}`)];
    return a < b ? -1 : a > b ? 1 : 0;
  });
  // At least one task on each side when there is a test split at all.
  const count = fraction === 0 || ordered.length < 2 ? 0 : Math.min(ordered.length - 1, Math.max(1, Math.round(fraction * ordered.length)));
  return new Set(ordered.slice(0, count));
}

export async function splitDataset(dir: string, fraction: number, outDir = dir, options: { onProgress?: PassOptions['onProgress']; onStage?: (stage: string) => void } = {}): Promise<SplitSummary> {
  const names = new Set<string>();
  options.onStage?.('reading tasks');
  await passOverDataset(dir, 'split', ({ record }) => void names.add(taskKey(record.provenance.lineage.lane, record.provenance.lineage.task)), options);
  const tasks = [...names].sort();
  const test = testTasks(tasks, fraction);
  const [trainPath, testPath] = [join(outDir, TRAIN_FILE), join(outDir, TEST_FILE)];
  const train = new JsonlAppender(temporaryPathFor(trainPath));
  const held = new JsonlAppender(temporaryPathFor(testPath));
  options.onStage?.('copying');
  try {
    await passOverDataset(dir, 'split', (row) => {
      const key = taskKey(row.record.provenance.lineage.lane, row.record.provenance.lineage.task);
      // A task the first pass did not see means the file changed between the passes.
      if (!names.has(key)) throw new FactoryError('dataset_corrupt', `${dir}: line ${row.line} (task ${key}) was not there when the tasks were read: the file changed during the split`, { fix: 'run split again on a dataset no other process is writing' });
      (test.has(key) ? held : train).append(row.record, row.text);
    }, options);
    train.close({ sync: true });
    held.close({ sync: true });
  } catch (error) {
    train.close();
    held.close();
    rmSync(train.path, { force: true });
    rmSync(held.path, { force: true });
    throw error;
  }
  moveIntoPlace(train.path, trainPath);
  moveIntoPlace(held.path, testPath);
  const summary: SplitSummary = {
    format: SPLIT_FORMAT,
    test_fraction: fraction,
    splits: {
      train: { path: TRAIN_FILE, rows: train.rows, tasks: tasks.filter((task) => !test.has(task)) },
      test: { path: TEST_FILE, rows: held.rows, tasks: tasks.filter((task) => test.has(task)) },
    },
  };
  writeFileSync(join(outDir, SPLIT_FILE), JSON.stringify(summary, null, 2) + '\n');
  return summary;
}
