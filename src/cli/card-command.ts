// Owns the `card` command: regenerate a dataset's README.md (its Hugging Face
// dataset card) from the records, and print where it went.

import type { Command } from 'commander';
import { join } from 'node:path';
import { writeDatasetCard } from '../dataset/dataset-card.js';
import { refreshDataset } from './refresh-dataset.js';
import { formatProblem } from '../dataset/dataset-reader.js';
import type { Streams } from './output.js';

interface CardFlags {
  license?: string;
}

export function registerCard(program: Command, streams: Streams): void {
  program
    .command('card')
    .summary("write a dataset's README.md (Hugging Face dataset card) from its records")
    .description(
      'Writes <dir>/README.md in the Hugging Face dataset-card form: YAML front matter (license, pretty_name, tags, ' +
        'task_categories, size_categories, and configs whose data_files list each split: the files named in <dir>/split.json ' +
        'when there is one, otherwise episodes.jsonl as the train split), then purpose, files, record schema, generation ' +
        '(lanes, tasks, policies and variants, worlds, verification), provenance, the statistics of `episode-factory stats`, ' +
        'and limitations. Everything in it comes from the records and the files beside them, so the same dataset gives ' +
        'the same bytes: regenerate it after changing the data rather than editing it. Prints the path. Corrupt lines are ' +
        'listed on stderr and left out. Exit 0; 2 when <dir> is not a dataset or split.json is unusable.',
    )
    .argument('<dir>', 'a dataset directory written by generate (holds episodes.jsonl)')
    .option('--license <id>', 'the license id for the front matter (mit, apache-2.0, cc-by-4.0, ...); default: "other", a placeholder to replace before publishing')
    .addHelpText('after', '\nExamples:\n  episode-factory card datasets/tool-world-v1\n  episode-factory card datasets/tool-world-faults-v1 --license cc-by-4.0')
    .action(async (dir: string, flags: CardFlags) => {
      const { path, problems } = await writeDatasetCard(dir, flags.license === undefined ? {} : { license: flags.license });
      await refreshDataset(dir, 'card');
      for (const problem of problems) streams.stderr.write(`${formatProblem({ ...problem, file: join(dir, problem.file) })}\n`);
      streams.stdout.write(`${path}\n`);
    });
}
