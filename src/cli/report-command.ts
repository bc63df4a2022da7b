// Owns the `report` command: one self-contained HTML file with a dataset's
// overview, plots and episode viewer; a progress line on long datasets, and
// the path (or a JSON summary) when it is written.

import { type Command, InvalidArgumentError } from 'commander';
import { join } from 'node:path';
import { formatProblem } from '../dataset/dataset-reader.js';
import { REPORT_FILE, writeReport } from '../dataset/dataset-report.js';
import { DEFAULT_MAX_EPISODES } from '../dataset/report-data.js';
import { grouped } from '../dataset/report-page.js';
import { ProgressLine, type Streams, writeJson } from './output.js';

interface ReportFlags {
  out?: string;
  maxEpisodes: number;
  json?: boolean;
  quiet?: boolean;
}

function episodeBudget(value: string): number {
  const parsed = Number(value);
  if (value.trim() === '' || !Number.isInteger(parsed) || parsed < 0) {
    throw new InvalidArgumentError(`takes a whole number >= 0, e.g. --max-episodes ${DEFAULT_MAX_EPISODES}`);
  }
  return parsed;
}

export function registerReport(program: Command, streams: Streams, setExit: (status: number) => void): void {
  program
    .command('report')
    .summary('one self-contained HTML file: overview, plots and an episode viewer')
    .description(
      'Writes one HTML file that opens from file:// with no network (scripts, styles and data inlined; a Content-Security-Policy ' +
        'forbids every request): an overview (records, rejected, duplicates dropped, worlds, tasks, policies and models with ' +
        'digests, lane hashes); plots drawn as SVG with axes and units (task completion per task with 95% Wilson intervals, ' +
        'faults fired per kind and the share recovered, error turns per episode, episode length, tool calls, completion by ' +
        'policy variant or model); and an episode viewer: a searchable, filterable list (world, task, policy, fault kind, ' +
        'completed or not) where selecting an episode shows the conversation, tool calls with their arguments, ok:false results ' +
        'and injected faults highlighted, the hidden predicates\' verdicts, and the lineage with the commands to regenerate and ' +
        'replay it. The plots count every record; the viewer embeds at most --max-episodes of them (a sample in which worlds, ' +
        'tasks, policies, outcomes and fault kinds take turns, and the report says so), parsed only when opened. Reads episodes.jsonl ' +
        'twice, streaming, so memory stays flat. Same dataset, same bytes. Written atomically; inside <dir> it is added to ' +
        'manifest.json. The files it reads (records, rejected.jsonl, exports) must match manifest.json first, or nothing is ' +
        'written (exit 1, each difference named); a directory with no manifest is reported with a warning on stderr. ' +
        'Unreadable lines and record_ids that hold two contents are counted and listed in the report, which is still ' +
        'written, and the exit status is 1. Exit 0; 1 the files differ from the manifest or some lines are not records; ' +
        '2 when <dir> is not a dataset.',
    )
    .argument('<dir>', 'a dataset directory written by generate (holds episodes.jsonl)')
    .option('--out <file>', `where to write the report (default: <dir>/${REPORT_FILE})`)
    .option('--max-episodes <n>', 'episodes the viewer embeds at most; 0 for plots only', episodeBudget, DEFAULT_MAX_EPISODES)
    .option('--json', 'print a summary (path, bytes, sha256, records, embedded, sampled, problems, rejected, duplicates_dropped) as one JSON object')
    .option('--quiet', 'no progress line')
    .addHelpText(
      'after',
      '\nExamples:\n  episode-factory report datasets/tool-world-faults-v1\n' +
        '  episode-factory report datasets/big --out /tmp/big.html --max-episodes 5000\n' +
        '  xdg-open datasets/tool-world-faults-v1/report.html   # or open it in any browser',
    )
    .action(async (dir: string, flags: ReportFlags) => {
      const progress = new ProgressLine(streams.stderr, !flags.json && !flags.quiet);
      const summary = await writeReport(dir, {
        maxEpisodes: flags.maxEpisodes,
        ...(flags.out !== undefined ? { out: flags.out } : {}),
        onProgress: (pass, lines) => {
          if (progress.active) progress.update(`report ${dir}: ${pass === 1 ? 'counting' : 'embedding episodes from'} line ${grouped(lines)}`);
        },
      });
      progress.clear();
      if (summary.warning) streams.stderr.write(`report: warning: ${summary.warning}\n`);
      for (const problem of summary.problem_examples) streams.stderr.write(`${formatProblem({ ...problem, file: join(dir, problem.file) })}\n`);
      if (summary.problems > summary.problem_examples.length) streams.stderr.write(`report: ${summary.problems - summary.problem_examples.length} more unreadable lines, counted in the report\n`);
      setExit(summary.problems > 0 ? 1 : 0);
      if (flags.json) {
        writeJson(streams, summary);
        return;
      }
      const viewer = summary.sampled ? `${summary.embedded} of ${summary.records} episodes in the viewer (a sample)` : `${summary.embedded} episodes in the viewer`;
      const problems = summary.problems > 0 ? `, ${summary.problems} unreadable line${summary.problems === 1 ? '' : 's'} left out (listed in the report)` : '';
      streams.stdout.write(`report ${dir}: ${summary.records} records, ${viewer}${problems}, ${(summary.bytes / 1024).toFixed(0)} KiB -> ${summary.path}\n`);
    });
}
