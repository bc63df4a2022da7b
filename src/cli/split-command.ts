// Owns the `split` command: train/test by task, written beside the records.

import type { Command } from 'commander';
import { beginDatasetUpdate } from '../dataset/dataset-inputs.js';
import { EPISODES_FILE } from '../dataset/dataset-reader.js';
import { SPLIT_FILE, splitDataset, TEST_FILE, TRAIN_FILE } from '../dataset/dataset-split.js';
import { DEFAULT_MAX_FILE_BYTES, SPLITS_DIRECTORY } from '../records/record-files.js';
import { parseFileSize } from './file-size-flag.js';
import { PassProgress, type Streams, writeJson } from './output.js';

const tasks = (count: number) => `${count} task${count === 1 ? '' : 's'}`;

export function registerSplit(program: Command, streams: Streams): void {
  program
    .command('split')
    .summary('deterministic train/test split by task')
    .description(
      'Splits the records of <dir>/episodes.jsonl into train.jsonl and test.jsonl by task, never by episode, so no task ' +
        'is in both. Which tasks go to test depends only on the lane and task names, so adding seeds never moves a task. ' +
        'Lines are copied byte for byte. Writes split.json (which file holds which split and its tasks), which `card` reads, ' +
        'and lists the three files in manifest.json. episodes.jsonl must match the manifest first: a dataset edited after ' +
        'its run wrote it, or one with no manifest, is refused (exit 1) with each difference named. Exit 0; 1 the files differ ' +
        'from the manifest or a record_id holds two contents; 2 not a dataset or unreadable lines.',
    )
    .argument('<dir>', 'a dataset directory')
    .option('--test <fraction>', 'share of tasks held out for test (at least one task when above 0)', '0.1')
    .option('--max-file-size <size>', `past this size a side is written as several files, splits/train-00000-of-00004.jsonl, each within it: a number of bytes, or with KB, MB or GB (default ${DEFAULT_MAX_FILE_BYTES / 1024 ** 2}MB)`)
    .option('--json', 'print the split layout as JSON')
    .action(async (dir: string, flags: { test: string; json?: boolean; maxFileSize?: string }) => {
      const maxFileBytes = parseFileSize('--max-file-size', flags.maxFileSize);
      const update = await beginDatasetUpdate(dir, 'split', { inputs: [EPISODES_FILE], outputs: [TRAIN_FILE, TEST_FILE, `${SPLITS_DIRECTORY}/`, SPLIT_FILE] });
      const progress = new PassProgress(streams, 'split', !flags.json);
      const summary = await splitDataset(dir, Number(flags.test), dir, { onProgress: progress.update, onStage: (stage) => progress.begin(stage), maxFileBytes }).finally(() => progress.clear());
      await update.commit();
      if (flags.json) return writeJson(streams, summary);
      const { train, test } = summary.splits;
      streams.stdout.write(
        `split ${dir}: train ${train.rows} records (${tasks(train.tasks.length)}), test ${test.rows} records (${tasks(test.tasks.length)}: ${test.tasks.join(', ') || 'none'})\n`,
      );
    });
}
