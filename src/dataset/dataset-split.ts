// Owns `split`: a deterministic train/test split by task, never by episode, so
// no task is seen in both. Which tasks go to test is decided by a hash of the
// lane and task names alone, so adding seeds never moves a task. Records are
// copied line for line, bytes unchanged. Two passes in bounded memory: the
// first gathers the task names (the split needs them all), the second copies
// each line to its side. Both sides are written under temporary names and
// moved into place only when every line was read, so a dataset with an
// unreadable line keeps its earlier split. A side past the size bound is cut
// into splits/<side>-NNNNN-of-NNNNN.jsonl files, as a dataset's records are
// into data/.

import { join, posix } from 'node:path';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { FactoryError } from '../core/errors.js';
import { sha256Hex } from '../core/hashing.js';
import { moveIntoPlace, temporaryPathFor } from '../records/atomic-file.js';
import { JsonlAppender } from '../records/jsonl.js';
import { DEFAULT_MAX_FILE_BYTES, FileCutter, splitFileName, splitGlob, SPLITS_DIRECTORY } from '../records/record-files.js';
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

/**
 * One side of the split as it is written: lines appended to staged files,
 * cut like a dataset's records past the size bound, moved into place as
 * `<name>.jsonl` (one file) or splits/<name>-NNNNN-of-NNNNN.jsonl.
 */
class SplitSide {
  private readonly files: JsonlAppender[] = [];
  private readonly cutter: FileCutter;

  constructor(private readonly outDir: string, readonly name: string, maxFileBytes: number) {
    this.cutter = new FileCutter(maxFileBytes);
    this.files.push(new JsonlAppender(this.staged(0)));
  }

  private staged(index: number): string {
    return temporaryPathFor(join(this.outDir, `${this.name}-${String(index).padStart(5, '0')}.jsonl`));
  }

  get rows(): number {
    return this.files.reduce((sum, file) => sum + file.rows, 0);
  }

  append(record: unknown, text: string): void {
    if (this.cutter.take(Buffer.byteLength(text) + 1)) {
      this.files.at(-1)!.close({ sync: true });
      this.files.push(new JsonlAppender(this.staged(this.files.length)));
    }
    this.files.at(-1)!.append(record, text);
  }

  close(sync: boolean): void {
    for (const file of this.files) file.close({ sync });
  }

  discard(): void {
    this.close(false);
    for (const file of this.files) rmSync(file.path, { force: true });
  }

  /** Moves the files into place; returns the path split.json and the card name (a glob for several files). */
  publish(): string {
    const count = this.files.length;
    if (count === 1) {
      moveIntoPlace(this.files[0]!.path, join(this.outDir, `${this.name}.jsonl`));
      return `${this.name}.jsonl`;
    }
    mkdirSync(join(this.outDir, SPLITS_DIRECTORY), { recursive: true });
    for (const [index, file] of this.files.entries()) moveIntoPlace(file.path, join(this.outDir, splitFileName(this.name, index, count)));
    return splitGlob(this.name);
  }
}

/** The files an earlier split wrote (either layout), removed before a new split moves its own into place. */
function earlierSplitFiles(outDir: string): string[] {
  const top = [TRAIN_FILE, TEST_FILE].filter((file) => existsSync(join(outDir, file)));
  const directory = join(outDir, SPLITS_DIRECTORY);
  const below = existsSync(directory) ? readdirSync(directory).filter((name) => /^(train|test)-\d{5}-of-\d{5}\.jsonl$/.test(name)).map((name) => posix.join(SPLITS_DIRECTORY, name)) : [];
  return [...top, ...below];
}

export async function splitDataset(
  dir: string,
  fraction: number,
  outDir = dir,
  options: { onProgress?: PassOptions['onProgress']; onStage?: (stage: string) => void; maxFileBytes?: number } = {},
): Promise<SplitSummary> {
  const names = new Set<string>();
  options.onStage?.('reading tasks');
  const pass = options.onProgress ? { onProgress: options.onProgress } : {};
  await passOverDataset(dir, 'split', ({ record }) => void names.add(taskKey(record.provenance.lineage.lane, record.provenance.lineage.task)), pass);
  const tasks = [...names].sort();
  const test = testTasks(tasks, fraction);
  const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  const train = new SplitSide(outDir, 'train', maxFileBytes);
  const held = new SplitSide(outDir, 'test', maxFileBytes);
  options.onStage?.('copying');
  try {
    await passOverDataset(dir, 'split', (row) => {
      const key = taskKey(row.record.provenance.lineage.lane, row.record.provenance.lineage.task);
      // A task the first pass did not see means the file changed between the passes.
      if (!names.has(key)) throw new FactoryError('dataset_corrupt', `${dir}: ${row.file}:${row.line} (task ${key}) was not there when the tasks were read: the file changed during the split`, { fix: 'run split again on a dataset no other process is writing' });
      (test.has(key) ? held : train).append(row.record, row.text);
    }, pass);
    train.close(true);
    held.close(true);
  } catch (error) {
    train.discard();
    held.discard();
    throw error;
  }
  for (const file of earlierSplitFiles(outDir)) rmSync(join(outDir, file), { force: true });
  if (existsSync(join(outDir, SPLITS_DIRECTORY)) && readdirSync(join(outDir, SPLITS_DIRECTORY)).length === 0) rmSync(join(outDir, SPLITS_DIRECTORY), { recursive: true });
  const summary: SplitSummary = {
    format: SPLIT_FORMAT,
    test_fraction: fraction,
    splits: {
      train: { path: train.publish(), rows: train.rows, tasks: tasks.filter((task) => !test.has(task)) },
      test: { path: held.publish(), rows: held.rows, tasks: tasks.filter((task) => test.has(task)) },
    },
  };
  writeFileSync(join(outDir, SPLIT_FILE), JSON.stringify(summary, null, 2) + '\n');
  return summary;
}
