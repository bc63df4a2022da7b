// Owns the `merge` command: shard directories in, one dataset out, with a
// progress line on a terminal and a one-line summary (or JSON). Exit 2 when the shards do not make one whole run.

import type { Command } from 'commander';
import { mergeShards } from '../shards/merge-shards.js';
import { MAX_FILE_SIZE_HELP, parseFileSize } from './file-size-flag.js';
import { percent, ProgressLine, shortDuration, type Streams, writeJson } from './output.js';

export function registerMerge(program: Command, streams: Streams): void {
  program
    .command('merge')
    .summary('combine the shards of one run (generate --shard I/N) into one dataset')
    .description(
      'Verifies and combines the output directories of generate --shard 0/N .. N-1/N: every shard file must match its ' +
        'manifest, every shard must come from the same run (lane, seeds, tasks, policy, formats, factory version), and ' +
        'together they must cover the plan exactly once. Writes episodes.jsonl (data/train-*-of-*.jsonl past --max-file-size), rejected.jsonl, Arrow, Parquet, traces/ ' +
        "(the shards' trace archives, and their indexes joined) and manifest.json to --out; the data files are byte for " +
        'byte those of a single run. Shards may come from many ' +
        'machines (a Kubernetes Indexed Job, a Slurm array) writing to shared storage; see docs/scaling.md.',
    )
    .argument('<dirs...>', 'the shard directories, in any order')
    .requiredOption('--out <dir>', 'where the merged dataset goes (new, empty, or an earlier dataset)')
    .option('--max-file-size <size>', MAX_FILE_SIZE_HELP)
    .option('--json', 'print the summary as one JSON object on stdout')
    .option('--quiet', 'no progress line')
    .addHelpText('after', '\nExample:\n  episode-factory merge /shared/run/shard-0 /shared/run/shard-1 /shared/run/shard-2 --out datasets/big')
    .action(async (dirs: string[], flags: { out: string; json?: boolean; quiet?: boolean; maxFileSize?: string }) => {
      // On a terminal, the step under way (checking each shard, writing the records and their copies, hashing): a big merge takes minutes.
      const progress = new ProgressLine(streams.stderr, !flags.json && !flags.quiet);
      const started = performance.now();
      const summary = await mergeShards({
        sources: dirs,
        outDir: flags.out,
        maxFileBytes: parseFileSize('--max-file-size', flags.maxFileSize),
        onStage: (stage) => progress.update(`merge: ${stage} (${shortDuration((performance.now() - started) / 1000)})`, { force: true }),
      }).finally(() => progress.clear());
      if (flags.json) return writeJson(streams, summary);
      streams.stdout.write(
        `merge ${summary.lane}: ${summary.shards} shards, ${summary.episodes} episodes, ${summary.written} records, ${summary.rejected} rejected, ` +
          `tasks completed ${summary.completed}/${summary.written} (${percent(summary.completion_rate)}), wall ${summary.wall_seconds.toFixed(2)}s -> ${summary.out_dir}\n`,
      );
    });
}
