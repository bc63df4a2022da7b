// Owns the `generate` command: arguments to options, a live progress line,
// Ctrl-C (and SIGTERM) as a clean stop that says how to resume, the one-line
// summary (or JSON), and the exit status (1 if any record was rejected or more
// episodes than --max-infra-errors were cut short by the model server, 130
// when stopped).

import type { Command } from 'commander';
import { join } from 'node:path';
import { FactoryError } from '../core/errors.js';
import { generateDataset, OUTPUT_FORMATS, type OutputFormat } from '../generation/generate-dataset.js';
import { parsePolicySpec, preparePolicy } from '../selection/policy-selection.js';
import type { Rejection } from '../generation/run-parts.js';
import { parseUserSpec, prepareUser } from '../selection/user-selection.js';
import { loadLane } from '../lanes/lane-loader.js';
import { parseSeedRange } from '../lanes/seed-range.js';
import { parseShard } from '../generation/plan-shard.js';
import { parseCount } from './count-flag.js';
import { MAX_FILE_SIZE_HELP, parseFileSize } from './file-size-flag.js';
import { addModelServerFlags, modelServerOptions, type ModelServerFlags } from './model-server-flags.js';
import { percent, ProgressLine, shortDuration, type Streams, writeJson } from './output.js';

interface GenerateFlags extends ModelServerFlags {
  policy: string;
  user: string;
  mode?: string;
  codec?: string;
  concurrency: string;
  workers?: string;
  shard?: string;
  resume?: boolean;
  restart?: boolean;
  seeds?: string;
  format?: string;
  maxFileSize?: string;
  task?: string[];
  variant?: string[];
  out?: string;
  maxInfraErrors: string;
  json?: boolean;
  quiet?: boolean;
}

/**
 * Infrastructure failures a run accepts before it exits 1. None by default: each is a (task, seed) missing from
 * the dataset, and they cluster (a server that fails once tends to fail on the long, slow episodes), so a run
 * with any is not the run that was asked for. The records that did verify are still written.
 */
export const DEFAULT_MAX_INFRA_ERRORS = 0;

/** How many infra failures are listed one per line before the rest are only counted. */
const LISTED_INFRA_FAILURES = 20;

function parseLimit(flag: string, text: string): number {
  if (!/^[0-9]{1,9}$/.test(text)) throw new FactoryError('usage', `${flag} "${text}" is not a whole number`, { fix: `pass ${flag} 0 or more` });
  return Number(text);
}

/** The INFRA lines: one per failed episode, up to a limit, then a count. */
function infraLines(failures: readonly Rejection[]): string {
  const listed = failures.slice(0, LISTED_INFRA_FAILURES).map((failure) => `INFRA ${failure.record_id}: ${failure.reason}\n`);
  const rest = failures.length - listed.length;
  return listed.join('') + (rest > 0 ? `INFRA … and ${rest} more (rejected.jsonl, stage infra)\n` : '');
}

/** Exit status of a run stopped by Ctrl-C, as a shell reports a SIGINT. */
export const INTERRUPTED_EXIT = 130;

function parseFormats(list: string): OutputFormat[] {
  const formats = list.split(',').map((format) => format.trim()).filter(Boolean);
  const unknown = formats.filter((format) => !(OUTPUT_FORMATS as readonly string[]).includes(format));
  if (unknown.length > 0) {
    throw new FactoryError('usage', `--format: unknown format ${unknown.map((format) => `"${format}"`).join(', ')}`, { fix: `use a comma-separated list of ${OUTPUT_FORMATS.join(', ')}` });
  }
  if (!formats.includes('jsonl')) {
    throw new FactoryError('usage', '--format must include jsonl', { fix: 'add jsonl, e.g. --format jsonl,parquet: replay, audit and every dataset operation read episodes.jsonl' });
  }
  return formats as OutputFormat[];
}

export function registerGenerate(program: Command, streams: Streams, setExit: (status: number) => void): void {
  addModelServerFlags(
    program
      .command('generate')
    .summary('run a lane: produce, replay-verify and write episode records')
    .description(
      'Runs every (task, seed) episode of a lane against a fresh MCP world, replays each one on a second fresh world, ' +
        'judges it with the hidden predicates, and writes verified records to <out>/episodes.jsonl, with the same rows ' +
        'in episodes.arrow (Arrow IPC stream) and episodes.parquet. Episodes that do not ' +
        'verify go to <out>/rejected.jsonl with the reason. Also writes traces/ (one trace archive per part, and traces/index.jsonl naming each ' +
        "episode's archive) and manifest.json. " +
        'Same lane and seeds give byte-identical episodes.jsonl, whatever --workers, --shard or --resume. Finished episodes ' +
        'are sealed in parts under <out>/.partial as the run goes, so a killed run (Ctrl-C, SIGTERM, even SIGKILL) loses ' +
        'nothing finished: rerun the same command with --resume. With a model, an episode the model server cut short ' +
        "(an HTTP error, a dropped connection, silence past --model-timeout, an answer that is not the server's protocol) says " +
        'nothing about the model: it goes to rejected.jsonl with stage infra, never to episodes.jsonl, and is counted as an ' +
        'infra error. Exit 0 when every episode verified, 1 if any was rejected or more than --max-infra-errors were ' +
        'infra errors, 2 for a usage problem (bad lane, bad seeds) or a model server that fails the start-up check, 130 when stopped.',
    )
    .argument('<lane>', 'a lane name (lanes/<name>.json) or a path to a lane file')
    .option('--seeds <A..B>', "seed range, both ends inclusive (default: the lane's seeds)")
    .option('--task <id...>', 'only these task ids (default: every task)')
    .option('--variant <name...>', 'only these policy variants (lanes whose policy.draw is "each")')
    .option('--out <dir>', 'output directory (default: datasets/<lane>)')
    .option(
      '--policy <policy>',
      "who plays: scripted (the lane's solutions), ollama:<model> for a model served by Ollama, or openai:<model> for one served through an OpenAI-compatible API (vLLM, SGLang, llama.cpp's server; see --base-url)",
      'scripted',
    )
    .option(
      '--user <user>',
      'who plays the user of tasks that declare facts (and answers the agent\'s questions): scripted (from the facts), ollama:<model> or openai:<model>',
      'scripted',
    )
    .option('--mode <mode>', 'with ollama:<model>: native (/api/chat with tools) or raw (/api/generate with the codec\'s prompt); default: the lane\'s, else native')
    .option('--codec <name>', 'with a model: hermes, llama3 or mistral, for calls written as text; default: from the model\'s family')
  )
    .option('--workers <n>', 'worker threads for a scripted lane (default: the number of cores; runs under 200 episodes use one thread; a model always uses one)')
    .option('--concurrency <n>', 'episodes in flight at once per thread (with a model: requests in flight against its server; vLLM and SGLang batch them, keep it small against one Ollama)', '1')
    .option(
      '--max-infra-errors <n>',
      'exit 1 when more episodes than this were cut short by the model server (kept in rejected.jsonl with stage infra, never in episodes.jsonl)',
      String(DEFAULT_MAX_INFRA_ERRORS),
    )
    .option('--shard <I/N>', 'run only the I-th of N slices of the plan (0-based); I may be "auto": JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID. Combine shards with merge')
    .option('--resume', 'finish the interrupted run of this same command in <out>, keeping what it finished')
    .option('--restart', 'discard an interrupted run in <out> and start again')
    .option('--format <list>', 'comma-separated output formats: jsonl (always), arrow (IPC stream), parquet', 'jsonl,arrow,parquet')
    .option('--max-file-size <size>', MAX_FILE_SIZE_HELP)
    .option('--json', 'print the summary as one JSON object on stdout')
    .option('--quiet', 'no progress line')
    .addHelpText('after', '\nExamples:\n  episode-factory generate tool-world-v1\n  episode-factory generate tool-world-v1 --policy openai:Qwen/Qwen2.5-1.5B-Instruct --base-url http://127.0.0.1:8000/v1 --concurrency 8\n  episode-factory generate tool-world-v1 --seeds 0..99 --out /tmp/big --json\n  episode-factory generate lanes/my-lane.json --task close-named-issue --seeds 3..3\n  episode-factory generate tool-world-v1 --seeds 0..19999 --out /tmp/big --workers 2\n  episode-factory generate tool-world-v1 --seeds 0..19999 --out /tmp/big --resume     # after a kill\n  episode-factory generate tool-world-v1 --seeds 0..19999 --shard 0/4 --out /shared/s0   # then: merge /shared/s0 ... --out D')
    .action(async (laneReference: string, flags: GenerateFlags) => {
      const lane = loadLane(laneReference);
      const seeds = flags.seeds === undefined ? lane.seeds : parseSeedRange(flags.seeds);
      const outDir = flags.out ?? join('datasets', lane.name);
      const formats = parseFormats(flags.format ?? 'jsonl,arrow,parquet');
      const concurrency = parseCount('--concurrency', flags.concurrency, 4);
      const workers = flags.workers === undefined ? undefined : parseCount('--workers', flags.workers, 4);
      const shard = flags.shard === undefined ? undefined : parseShard(flags.shard);
      const maxInfraErrors = parseLimit('--max-infra-errors', flags.maxInfraErrors);
      const policySpec = parsePolicySpec(flags.policy);
      const userSpec = parseUserSpec(flags.user);
      const serverOptions = modelServerOptions(flags, [policySpec.kind === 'model' ? policySpec.model : undefined, userSpec.kind === 'model' ? userSpec.model : undefined]);
      // A model is checked now: if its server or the model is missing, nothing is written.
      const policy = await preparePolicy(lane, policySpec, { ...serverOptions, mode: flags.mode, codec: flags.codec });
      const user = await prepareUser(lane, userSpec, serverOptions);
      if (user && !flags.json) streams.stderr.write(`generate: the user is ${user.checked.describe()}\n`);
      if (policy.model && !flags.json) {
        const { checked, mode, codec } = policy.model;
        streams.stderr.write(`generate: ${checked.describe()}, ${checked.modes.length > 1 ? `${mode} mode, ` : ''}${codec.name} codec\n`);
      }
      const progress = new ProgressLine(streams.stderr, !flags.json && !flags.quiet);
      const note = (message: string) => {
        if (!flags.json && !flags.quiet) streams.stderr.write(`generate: ${message}\n`);
      };
      const stop = new AbortController();
      const onSignal = (signal: NodeJS.Signals) => {
        progress.clear();
        note(`${signal}: finishing the episodes in flight, then stopping (a second ${signal} kills at once)`);
        process.removeListener('SIGINT', onSignal);
        process.removeListener('SIGTERM', onSignal);
        stop.abort();
      };
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      const startedAt = performance.now();
      let firstDone: number | undefined;
      let summary;
      try {
        summary = await generateDataset({
          lane,
          outDir,
          seeds,
          tasks: flags.task,
          variants: flags.variant,
          formats,
          maxFileBytes: parseFileSize('--max-file-size', flags.maxFileSize),
          policy,
          ...(user ? { user } : {}),
          concurrency,
          workers,
          shard,
          resume: flags.resume,
          restart: flags.restart,
          signal: stop.signal,
          onNote: note,
          onEpisode: (episode) => {
            if (!progress.active) return;
            // The rate counts only this run's episodes: resumed ones took no time now.
            firstDone ??= episode.done - 1;
            const seconds = (performance.now() - startedAt) / 1000;
            const rate = (episode.done - firstDone) / Math.max(seconds, 1e-3);
            const eta = rate > 0 ? shortDuration((episode.total - episode.done) / rate) : '?';
            progress.update(
              `${lane.name}: ${episode.done}/${episode.total} episodes, ${rate.toFixed(rate < 10 ? 1 : 0)}/s, ETA ${eta}, ${episode.rejected} rejected` +
                (episode.infra_errors > 0 ? `, ${episode.infra_errors} infra errors` : ''),
              { force: episode.done === episode.total },
            );
          },
        });
      } finally {
        process.removeListener('SIGINT', onSignal);
        process.removeListener('SIGTERM', onSignal);
      }
      progress.clear();
      const output = { ...summary, max_infra_errors: maxInfraErrors };
      if (summary.interrupted) {
        if (flags.json) writeJson(streams, output);
        const finished = summary.written + summary.rejected + summary.infra_errors;
        streams.stderr.write(
          `generate ${summary.lane}: stopped with ${finished} of ${summary.episodes} episodes finished, kept in ${join(outDir, '.partial')}. ` +
            `To finish, rerun the same command with --resume.\n`,
        );
        setExit(INTERRUPTED_EXIT);
        return;
      }
      if (flags.json) {
        writeJson(streams, output);
      } else {
        for (const rejection of summary.rejections) {
          streams.stderr.write(`REJECTED ${rejection.record_id} (${rejection.stage}): ${rejection.reason}\n`);
        }
        streams.stderr.write(infraLines(summary.infra_failures));
        const kinds = Object.keys(summary.faults_fired);
        const faults = kinds.length
          ? `faults fired ${Object.values(summary.faults_fired).reduce((sum, count) => sum + count, 0)} (${kinds.length} kinds), `
          : '';
        streams.stdout.write(
          `generate ${summary.lane}: ${summary.episodes} episodes, ${summary.written} records written, ${summary.rejected} rejected, ` +
            // A scripted run has no model server, so its line stays as it always was.
            (policy.model || user || summary.infra_errors > 0 ? `${summary.infra_errors} infra error${summary.infra_errors === 1 ? '' : 's'} (model server), ` : '') +
            `tasks completed ${summary.completed}/${summary.written} (${percent(summary.completion_rate)}), ${faults}` +
            `${summary.resumed > 0 ? `${summary.resumed} resumed, ` : ''}${summary.shard ? `shard ${summary.shard.index}/${summary.shard.count} (plan ${summary.shard.start}..${summary.shard.end - 1} of ${summary.shard.plan_episodes}), ` : ''}` +
            `wall ${summary.wall_seconds.toFixed(2)}s -> ${summary.out_dir}\n`,
        );
      }
      const tooManyInfra = summary.infra_errors > maxInfraErrors;
      if (tooManyInfra && !flags.json) {
        streams.stderr.write(
          `generate: ${summary.infra_errors} of ${summary.episodes} episodes failed because the model server failed, more than --max-infra-errors ${maxInfraErrors} allows; ` +
            `they are in ${join(summary.out_dir, 'rejected.jsonl')} (stage infra), not in episodes.jsonl — fix: ${(policy.model?.checked ?? user?.checked)?.failureHint() ?? 'check the model server'}, ` +
            `then run the same command again; or pass --max-infra-errors ${summary.infra_errors} to accept them\n`,
        );
      }
      setExit(summary.rejected > 0 || tooManyInfra ? 1 : 0);
    });
}
