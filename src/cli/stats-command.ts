// Owns the `stats` command: a dataset's statistics as text tables or as one
// JSON object. The records file must match the manifest first. Unreadable
// lines do not stop it: the statistics cover the records that could be read,
// each problem is named on stderr, and the exit status says there were some.

import type { Command } from 'commander';
import { join } from 'node:path';
import { checkInputs } from '../dataset/dataset-inputs.js';
import { EPISODES_FILE, formatProblem } from '../dataset/dataset-reader.js';
import { datasetStats } from '../dataset/dataset-stats.js';
import { formatStats } from '../dataset/stats-text.js';
import { PassProgress, type Streams, writeJson } from './output.js';

interface StatsFlags {
  json?: boolean;
}

export function registerStats(program: Command, streams: Streams, setExit: (status: number) => void): void {
  program
    .command('stats')
    .summary("a dataset's counts, completion and recovery rates, lengths and duplicates")
    .description(
      'Reads <dir>/episodes.jsonl and prints, from the records alone: counts by world, task, policy variant, policy actor, ' +
        'outcome and fault kind; task completion (overall, per task, per variant) and recovery rates, each with n and a ' +
        '95% Wilson interval, shown as `0.688 [0.579, 0.778] n=80`; the share of episodes still completed per fault kind; ' +
        'messages and tool calls per episode (min, p50, p90, max, mean, histogram); calls per assistant turn (how many turns ' +
        'made several calls) and the user simulator\'s replies (user messages after the first); and duplicate trajectories. ' +
        'Recovery is the share of episodes with an error turn or a fired fault whose task was still completed. ' +
        'episodes.jsonl must match manifest.json first (a directory with no manifest is read with a warning). Corrupt, ' +
        'torn, invalid or non-UTF-8 lines, and a record_id that holds two contents, are listed on stderr (file:line: reason) ' +
        'and left out of the counts, and the exit status is 1. Exit 0; 1 the file differs from the manifest or some lines ' +
        'are not records; 2 when <dir> is not a dataset.',
    )
    .argument('<dir>', 'a dataset directory written by generate (holds episodes.jsonl)')
    .option('--json', 'print the statistics as one JSON object (format episode-factory.stats.v1) on stdout')
    .addHelpText('after', '\nExamples:\n  episode-factory stats datasets/tool-world-faults-v1\n  episode-factory stats datasets/tool-world-v1 --json')
    .action(async (dir: string, flags: StatsFlags) => {
      const { warning } = await checkInputs(dir, 'stats', [EPISODES_FILE]);
      if (warning) streams.stderr.write(`stats: warning: ${warning}\n`);
      const progress = new PassProgress(streams, 'stats', !flags.json);
      const stats = await datasetStats(dir, { onProgress: progress.update }).finally(() => progress.clear());
      for (const problem of stats.problems) streams.stderr.write(`${formatProblem({ ...problem, file: join(dir, problem.file) })}\n`);
      if (stats.problem_count > stats.problems.length) streams.stderr.write(`${join(dir, EPISODES_FILE)}: and ${stats.problem_count - stats.problems.length} more unreadable lines, not listed\n`);
      setExit(stats.problem_count > 0 ? 1 : 0);
      if (flags.json) {
        writeJson(streams, stats);
        return;
      }
      streams.stdout.write(`stats ${dir}\n\n${formatStats(stats)}`);
    });
}
