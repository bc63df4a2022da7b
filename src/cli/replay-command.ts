// Owns the `replay` command: re-verify a dataset from its records alone and
// name every record that no longer verifies (exit 1).

import type { Command } from 'commander';
import { type ReplayFailure, replayDataset } from '../dataset-replay/replay-dataset.js';
import { parseCount } from './count-flag.js';
import { PassProgress, type Streams, writeJson } from './output.js';

interface ReplayFlags {
  record?: string[];
  workers?: string;
  lane?: string;
  json?: boolean;
  quiet?: boolean;
}

export function registerReplay(program: Command, streams: Streams, setExit: (status: number) => void): void {
  program
    .command('replay')
    .summary("re-verify a dataset's records from the records alone")
    .description(
      'For every record in <dir>/episodes.jsonl: find its lane by name and check the lane still has the hash the record ' +
        'carries, rebuild the world from the seed, re-issue the recorded calls through a real MCP server, and require every ' +
        'tool result, the final snapshot hash, every hidden predicate verdict and the recovery accounting to equal the ' +
        'record. Records made by a scripted policy are rebuilt by that policy, so edited text or arguments are caught too, ' +
        'and every line must be exactly the bytes its replay writes. The whole file must also match manifest.json (a deleted ' +
        'line leaves every other record verifiable); a directory with no manifest gets a warning. Exit 0 when all verify, ' +
        '1 naming each record that does not (or each corrupt line, a repeated record id, a file that differs from the ' +
        'manifest, or when there is nothing to verify), 2 for a usage problem.',
    )
    .argument('<dir>', 'a dataset directory written by generate')
    .option('--record <id...>', 'only these record ids')
    .option('--lane <lane>', "replay against this lane (name or path) instead of each record's own lane name")
    .option('--workers <n>', 'threads to replay on (default: the number of cores; a dataset under 200 lines uses one); the summary is the same whatever the count')
    .option('--json', 'print the summary as one JSON object on stdout')
    .option('--quiet', 'no progress line')
    .addHelpText('after', '\nExamples:\n  episode-factory replay datasets/tool-world-v1\n  episode-factory replay datasets/tool-world-v1 --workers 2 --json\n  episode-factory replay datasets/tool-world-v1 --record tool-world-v1.find-open-bugs.s0')
    .action(async (dir: string, flags: ReplayFlags) => {
      const progress = new PassProgress(streams, `replay ${dir}`, !flags.json && !flags.quiet);
      const workers = flags.workers === undefined ? 'auto' : parseCount('--workers', flags.workers, 4);
      const summary = await replayDataset(dir, {
        workers,
        recordIds: flags.record,
        lane: flags.lane,
        onRecord: (done, total) => progress.update({ records: done, bytes: done, totalBytes: total }),
        // Printed as found, not gathered: a replay of a huge dataset whose records fail keeps no list of them.
        ...(flags.json
          ? {}
          : {
              onFailure: (failure: ReplayFailure) => {
                progress.clear();
                for (const problem of failure.problems) streams.stdout.write(`FAIL ${failure.where}: ${problem}\n`);
              },
            }),
      });
      progress.clear();
      if (flags.json) {
        writeJson(streams, summary);
      } else {
        for (const problem of summary.manifest_problems) streams.stdout.write(`FAIL manifest: ${problem}\n`);
        if (summary.no_manifest) streams.stderr.write(`replay: warning: ${dir} has no manifest.json: a line removed from episodes.jsonl cannot be seen\n`);
        const corrupt = summary.corrupt_lines > 0 ? `, ${summary.corrupt_lines} corrupt line${summary.corrupt_lines === 1 ? '' : 's'}` : '';
        const manifest = summary.manifest_problems.length > 0 ? ', the records differ from the manifest' : '';
        streams.stdout.write(
          `replay ${dir}: ${summary.records} records, ${summary.verified} verified, ${summary.failed} failed${corrupt}${manifest} (wall ${summary.wall_seconds.toFixed(2)}s)\n`,
        );
        if (summary.records === 0) streams.stderr.write(`replay: ${dir} has no records to verify\n`);
      }
      setExit(summary.failed > 0 || summary.corrupt_lines > 0 || summary.manifest_problems.length > 0 || summary.records === 0 ? 1 : 0);
    });
}
