// Owns the `split` command: train/test by task, written beside the records.

import type { Command } from 'commander';
import { splitDataset } from '../dataset/dataset-split.js';
import { refreshDataset } from './refresh-dataset.js';
import { type Streams, writeJson } from './output.js';

const tasks = (count: number) => `${count} task${count === 1 ? '' : 's'}`;

export function registerSplit(program: Command, streams: Streams): void {
  program
    .command('split')
    .summary('deterministic train/test split by task')
    .description(
      'Splits the records of <dir>/episodes.jsonl into train.jsonl and test.jsonl by task, never by episode, so no task ' +
        'is in both. Which tasks go to test depends only on the lane and task names, so adding seeds never moves a task. ' +
        'Lines are copied byte for byte. Writes split.json (which file holds which split and its tasks), which `card` reads, ' +
        'and refreshes manifest.json.',
    )
    .argument('<dir>', 'a dataset directory')
    .option('--test <fraction>', 'share of tasks held out for test (at least one task when above 0)', '0.1')
    .option('--json', 'print the split layout as JSON')
    .action(async (dir: string, flags: { test: string; json?: boolean }) => {
      const summary = await splitDataset(dir, Number(flags.test));
      await refreshDataset(dir, 'split');
      if (flags.json) return writeJson(streams, summary);
      const { train, test } = summary.splits;
      streams.stdout.write(
        `split ${dir}: train ${train.rows} records (${tasks(train.tasks.length)}), test ${test.rows} records (${tasks(test.tasks.length)}: ${test.tasks.join(', ') || 'none'})\n`,
      );
    });
}
