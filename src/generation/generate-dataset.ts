// Owns `generate`: plan the lane's episodes (or one shard's slice of them),
// produce them in parts on the main thread or on worker threads, and publish
// the dataset. Parts are sealed atomically as they finish, so a killed run
// keeps its finished work and `--resume` completes it with exactly the bytes
// an uninterrupted run writes. Output is assembled in plan order in a staging
// directory and replaces the old dataset only when the run is complete.

import { randomUUID } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { errorMessage, FactoryError } from '../core/errors.js';
import { FACTORY_VERSION } from '../core/package-paths.js';
import { episodePlan, specRecordId } from '../lanes/episode-plan.js';
import type { Lane, SeedRange } from '../lanes/lane.js';
import { formatSeedRange } from '../lanes/seed-range.js';
import { COLUMNAR_FORMATS } from '../records/columnar-names.js';
import { DEFAULT_MAX_FILE_BYTES, nameRecordFiles, stagedCopies, stagedRecordFile, writeRecordFiles } from '../records/record-files.js';
import {
  claimDatasetDirectory,
  completePublish,
  concatenateFiles,
  createStaging,
  publishDataset,
  publishPending,
  REJECTED_FILE,
  STAGING_DIR,
} from './dataset-directory.js';
import type { EpisodeOutcome, PartContext } from './part-production.js';
import { stageTraceArchives } from './part-trace-archive.js';
import { shardSlice, type Shard } from './plan-shard.js';
import type { PreparedPolicy } from '../selection/policy-selection.js';
import { policyFactoryFor } from '../selection/scripted-policy-factory.js';
import type { PreparedUser } from '../selection/user-selection.js';
import { resolveProducedAt } from './produced-at.js';
import {
  finishedParts,
  identityDifference,
  missingRanges,
  partFile,
  readRunIdentity,
  RUN_FORMAT,
  writeRunIdentity,
  type PartSummary,
  type Rejection,
  type RunIdentity,
} from './run-parts.js';
import { startWorker, type GenerationWorker } from './worker-pool.js';
import { guidedParts } from './part-schedule.js';
import { isBuiltInWorld } from '../world/world-registry.js';

/** The most episodes in one part: what a kill can cost per worker, and how often progress is sealed. */
export const PART_EPISODES = 200;
/** Below this many episodes, starting worker threads costs more than it saves: the default then is one thread. */
export const MIN_EPISODES_FOR_WORKERS = 200;

export const OUTPUT_FORMATS = ['jsonl', ...COLUMNAR_FORMATS] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export interface GenerateOptions {
  lane: Lane;
  outDir: string;
  seeds?: SeedRange;
  tasks?: string[];
  /** Only these variants, in a lane that runs every variant per seed. */
  variants?: string[];
  /** The policy, prepared (and a model checked) by the caller; default: the lane's scripted policy. */
  policy?: PreparedPolicy;
  /** A model playing the user of tasks with facts, prepared (and checked) by the caller; default: the scripted user. */
  user?: PreparedUser;
  /** Episodes in flight at once on one thread (against one Ollama server, keep it small). Default 1. */
  concurrency?: number;
  /** Worker threads for a scripted policy; default: the number of cores. A model always runs on the main thread. */
  workers?: number;
  /** Run only this slice of the plan. */
  shard?: Shard;
  /** Keep the sealed parts of an interrupted run of the same command and run only what is missing. */
  resume?: boolean;
  /** Discard an interrupted run's parts and start again. */
  restart?: boolean;
  /** Aborting stops after the episodes in flight, seals them, and returns with `interrupted`. */
  signal?: AbortSignal;
  /** Default: all three. JSONL is always among them: every other operation reads it. */
  formats?: readonly OutputFormat[];
  /** Records beyond this many bytes of JSONL are written as data/train-NNNNN-of-NNNNN.* files, each within it (default 500 MiB). */
  maxFileBytes?: number;
  onEpisode?: (progress: EpisodeProgress) => void;
  /** Things worth a line on stderr: resuming, workers started. */
  onNote?: (message: string) => void;
}

export interface EpisodeProgress {
  done: number;
  total: number;
  record_id: string;
  status: EpisodeOutcome['status'];
  task_completed: boolean;
  rejected: number;
  /** Episodes the model server cut short so far. */
  infra_errors: number;
}

export interface GenerateSummary {
  lane: string;
  lane_sha256: string;
  out_dir: string;
  seeds: string;
  tasks: string[];
  shard: { index: number; count: number; start: number; end: number; plan_episodes: number } | null;
  episodes: number;
  written: number;
  /** Episodes that did not verify (stages plan, run, schema, replay). */
  rejected: number;
  /** Episodes the model server cut short (an HTTP error, a dropped connection, a timeout, an answer that is not its protocol): in rejected.jsonl with stage infra, never in episodes.jsonl. */
  infra_errors: number;
  completed: number;
  completion_rate: number;
  /** Faults fired across the written records, by kind. */
  faults_fired: Record<string, number>;
  workers: number;
  /** Episodes an interrupted run had already finished, kept by --resume. */
  resumed: number;
  /** True when the run was stopped before the end: nothing was published, --resume finishes it. */
  interrupted: boolean;
  wall_seconds: number;
  rejections: Rejection[];
  /** One per infra error: which episode, and how the server failed. */
  infra_failures: Rejection[];
}

export async function generateDataset(options: GenerateOptions): Promise<GenerateSummary> {
  const started = performance.now();
  const { lane, outDir } = options;
  const seeds = options.seeds ?? lane.seeds;
  const prepared = options.policy ?? { factory: policyFactoryFor(lane) };
  const plan = episodePlan(lane, seeds, options.tasks, options.variants, prepared.policy);
  const slice = shardSlice(plan.length, options.shard);
  const producedAt = resolveProducedAt(lane);
  const concurrency = positive('--concurrency', options.concurrency ?? 1);
  const formats = new Set(options.formats ?? OUTPUT_FORMATS);
  const columnar = formats.has('arrow') || formats.has('parquet');
  const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  if (!Number.isSafeInteger(maxFileBytes) || maxFileBytes < 1) throw new FactoryError('usage', `--max-file-size ${maxFileBytes} is not a positive number of bytes`, { fix: 'pass e.g. --max-file-size 500MB' });
  const identity: RunIdentity = {
    format: RUN_FORMAT,
    lane: lane.name,
    lane_sha256: lane.sha256,
    factory_version: FACTORY_VERSION,
    produced_at: producedAt,
    seeds: formatSeedRange(seeds),
    tasks: options.tasks && options.tasks.length > 0 ? [...options.tasks] : null,
    variants: options.variants && options.variants.length > 0 ? [...options.variants] : null,
    policy: prepared.policy ?? 'scripted',
    model_digest: prepared.model ? prepared.model.checked.pin : null,
    ...(options.user ? { user: options.user.user, user_digest: options.user.checked.pin } : {}),
    formats: OUTPUT_FORMATS.filter((format) => formats.has(format)),
    plan_episodes: plan.length,
    shard: options.shard ? { index: options.shard.index, count: options.shard.count } : null,
    slice,
  };
  const requestedWorkers = options.workers === undefined ? undefined : positive('--workers', options.workers);
  const modelPlays = prepared.policy !== undefined || options.user !== undefined;
  if (modelPlays && requestedWorkers !== undefined && requestedWorkers > 1) {
    throw new FactoryError('usage', `--workers ${requestedWorkers}: a model (policy or user) runs on the main thread (the model, not the CPU, is the bottleneck)`, {
      fix: 'drop --workers and use --concurrency to keep several requests in flight',
    });
  }
  if (options.resume && options.restart) throw new FactoryError('usage', '--resume keeps an interrupted run and --restart discards it; pick one', { fix: 'drop one of them' });

  const previousDataset = claimDatasetDirectory(outDir);
  const staging = join(outDir, STAGING_DIR);
  const previous = readRunIdentity(staging);
  // Reading the sealed parts hashes their files: done once, here; this run's own parts are added as they are sealed.
  let kept: PartSummary[] = [];
  if (previous && !options.restart) {
    kept = finishedParts(staging);
    const done = kept.reduce((sum, part) => sum + part.end - part.start, 0);
    if (!options.resume) {
      throw new FactoryError('usage', `${outDir} holds an interrupted run (${done} of ${previous.slice.end - previous.slice.start} episodes finished)`, {
        fix: 'rerun the same command with --resume to finish it, or with --restart to discard it',
      });
    }
    const difference = identityDifference(previous, identity);
    if (difference) {
      throw new FactoryError('usage', `cannot resume the interrupted run in ${outDir}: it was a different run (${difference})`, {
        fix: 'rerun exactly the command that started it with --resume, or pass --restart to discard it',
      });
    }
  } else {
    if (options.resume && !options.restart) options.onNote?.(`no interrupted run in ${outDir}; starting from the beginning`);
    createStaging(outDir);
    writeRunIdentity(staging, identity);
  }

  const resumed = kept.reduce((sum, part) => sum + part.end - part.start, 0);
  if (resumed > 0) options.onNote?.(`resuming: ${resumed} of ${slice.end - slice.start} episodes were already finished`);
  const chunks = missingRanges(kept, slice.start, slice.end);
  const remaining = chunks.reduce((sum, range) => sum + range.end - range.start, 0);
  // Asked for workers, a run gets them (up to one per episode); by default, only a run big enough to repay starting them.
  // A world registered at run time (a library user's own) exists only on this thread.
  const workerCount =
    modelPlays || remaining === 0 || !isBuiltInWorld(lane.document.world.name)
      ? 1
      : requestedWorkers !== undefined
        ? Math.min(requestedWorkers, remaining)
        : remaining < MIN_EPISODES_FOR_WORKERS
          ? 1
          : Math.min(availableParallelism(), Math.ceil(remaining / 20));
  // Worker threads take parts that shrink towards the end, so they finish together.
  const queue = workerCount === 1 ? splitRanges(chunks, Math.max(1, Math.min(PART_EPISODES, Math.ceil(remaining / 4)))) : guidedParts(chunks, workerCount, PART_EPISODES);

  let done = resumed;
  let rejectedSoFar = kept.reduce((sum, part) => sum + part.rejected, 0);
  let infraSoFar = kept.reduce((sum, part) => sum + (part.infra_errors ?? 0), 0);
  const total = slice.end - slice.start;
  const onEpisode = (outcome: EpisodeOutcome) => {
    done++;
    if (outcome.status === 'rejected') rejectedSoFar++;
    if (outcome.status === 'infra') infraSoFar++;
    options.onEpisode?.({ ...outcome, done, total, rejected: rejectedSoFar, infra_errors: infraSoFar });
  };
  // Arrow and Parquet are written from the parts as they are sealed, in plan order (a run
  // killed while publishing has them complete already, and finishes that instead).
  // Records past maxFileBytes are cut into several files (data/train-NNNNN-of-NNNNN.*), the columns where the JSONL is cut.
  const columnOutputsFor = (file: number) => stagedCopies(staging, file, (format) => formats.has(format));
  const columns = columnar && !publishPending(staging) ? new (await import('./part-columns.js')).ColumnarPartWriter(staging, slice.start, slice.end, columnOutputsFor, maxFileBytes) : undefined;
  for (const part of kept) columns?.add(part);
  const runId = `run-${randomUUID()}`;
  let stopping = options.signal?.aborted ?? false;
  const workers: GenerationWorker[] = [];
  const stopAll = () => {
    stopping = true;
    for (const worker of workers) worker.stop();
  };
  options.signal?.addEventListener('abort', stopAll, { once: true });
  let failure: unknown;
  const sealed: PartSummary[] = [];
  const sealPart = (part: PartSummary) => {
    sealed.push(part);
    columns?.add(part);
  };
  try {
    if (workerCount === 1) {
      // The episode machinery (worlds, SDK, verifier) loads only on the thread that runs episodes.
      const { producePart } = await import('./part-production.js');
      const context: PartContext = {
        plan,
        policy: prepared.factory,
        ...(options.user ? { userFor: options.user.factory } : {}),
        producedAt,
        staging,
        runId,
        concurrency,
        traceOnClose: !modelPlays,
        columnar,
      };
      for (const range of queue) {
        if (stopping) break;
        const part = await producePart(context, range.start, range.end, { shouldStop: () => stopping, onEpisode });
        if (part) sealPart(part);
      }
    } else {
      options.onNote?.(`${workerCount} worker threads`);
      for (let index = 0; index < workerCount; index++) {
        workers.push(startWorker({ lane, seeds, tasks: options.tasks, variants: options.variants, producedAt, staging, runId, columnar }));
      }
      let next = 0;
      await Promise.all(
        workers.map(async (worker) => {
          while (!stopping && next < queue.length) {
            const range = queue[next++]!;
            try {
              const part = await worker.run(range.start, range.end, onEpisode);
              if (part) sealPart(part);
            } catch (error) {
              failure ??= error;
              stopAll();
            }
          }
        }),
      );
    }
  } catch (error) {
    await columns?.abandon();
    throw error;
  } finally {
    options.signal?.removeEventListener('abort', stopAll);
    await Promise.all(workers.map((worker) => worker.terminate()));
  }
  if (failure) {
    await columns?.abandon();
    throw new FactoryError('usage', `${(failure as Error).message}; every finished part is kept in ${staging}`, { fix: 'rerun the same command with --resume' });
  }

  const parts = [...kept, ...sealed].sort((left, right) => left.start - right.start);
  const summary = aggregate(parts);
  const base = {
    lane: lane.name,
    lane_sha256: lane.sha256,
    out_dir: outDir,
    seeds: formatSeedRange(seeds),
    tasks: plan.length === 0 ? [] : plan.tasks.map((task) => task.id),
    shard: options.shard ? { ...options.shard, ...slice, plan_episodes: plan.length } : null,
    episodes: total,
    workers: workerCount,
    resumed,
  };
  const finish = (interrupted: boolean): GenerateSummary => ({
    ...base,
    ...summary,
    completion_rate: summary.written === 0 ? 0 : summary.completed / summary.written,
    interrupted,
    wall_seconds: Math.round(performance.now() - started) / 1000,
  });
  if (missingRanges(parts, slice.start, slice.end).length > 0) {
    await columns?.abandon();
    return finish(true);
  }

  // A run killed while publishing has its plan in staging, its parts still sealed beside it: finish what it started.
  if (publishPending(staging)) {
    completePublish(staging, outDir);
    return finish(false);
  }
  const jsonlRows = writeRecordFiles(
    parts.map((part) => partFile(staging, part, 'episodes')),
    (file) => stagedRecordFile(staging, file, 'jsonl'),
    maxFileBytes,
  );
  concatenateFiles(parts.map((part) => partFile(staging, part, 'rejected')), join(staging, REJECTED_FILE));
  let columnRows: number[] | undefined;
  try {
    columnRows = await columns?.finish();
  } catch (error) {
    // A full disk, or a part's columns unreadable: the parts are sealed, so the copies can be written again.
    throw new FactoryError('dataset_corrupt', `writing the Arrow/Parquet copies failed: ${errorMessage(error)}; every finished part is kept in ${staging}`, {
      fix: 'free the disk space or remove the damaged part, then rerun the same command with --resume',
      cause: error,
    });
  }
  if (columnRows && columnRows.join() !== jsonlRows.join()) {
    throw new FactoryError('dataset_corrupt', `the columnar copies were cut into files of ${columnRows.join(', ')} rows and the JSONL into ${jsonlRows.join(', ')}; every finished part is kept in ${staging}`, {
      fix: 'rerun the same command with --resume',
    });
  }
  const recordFileNames = nameRecordFiles(staging, jsonlRows.length, OUTPUT_FORMATS.filter((format) => formats.has(format)));

  const traceFiles = stageTraceArchives(staging, parts, (index) => specRecordId(plan.at(index)));
  const { format: _format, slice: _slice, ...run } = identity;
  await publishDataset(staging, outDir, previousDataset, [...recordFileNames, REJECTED_FILE, ...traceFiles], {
    operation: 'generate',
    lanes: [{ name: lane.name, sha256: lane.sha256 }],
    lane: lane.name,
    lane_sha256: lane.sha256,
    factory_version: FACTORY_VERSION,
    seeds: formatSeedRange(seeds),
    tasks: base.tasks,
    run,
    ...(base.shard ? { shard: base.shard } : {}),
    counts: { episodes: total, records: summary.written, rejected: summary.rejected, completed: summary.completed, ...(summary.infra_errors > 0 ? { infra_errors: summary.infra_errors } : {}) },
  });
  return finish(false);
}

function positive(flag: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new FactoryError('usage', `${flag} ${value} is not a positive whole number`, { fix: `pass ${flag} 1 or more` });
  return value;
}

/** Cuts ranges into parts of at most `size` episodes, in plan order. */
function splitRanges(ranges: readonly { start: number; end: number }[], size: number): { start: number; end: number }[] {
  const out: { start: number; end: number }[] = [];
  for (const range of ranges) for (let start = range.start; start < range.end; start += size) out.push({ start, end: Math.min(range.end, start + size) });
  return out;
}

function aggregate(parts: readonly PartSummary[]): Pick<GenerateSummary, 'written' | 'rejected' | 'infra_errors' | 'completed' | 'faults_fired' | 'rejections' | 'infra_failures'> {
  const faults: Record<string, number> = {};
  let written = 0;
  let rejected = 0;
  let infraErrors = 0;
  let completed = 0;
  const rejections: Rejection[] = [];
  const infraFailures: Rejection[] = [];
  for (const part of parts) {
    written += part.written;
    rejected += part.rejected;
    infraErrors += part.infra_errors ?? 0;
    completed += part.completed;
    rejections.push(...part.rejections);
    infraFailures.push(...(part.infra_failures ?? []));
    for (const [kind, count] of Object.entries(part.faults_fired)) faults[kind] = (faults[kind] ?? 0) + count;
  }
  const faultsFired = Object.fromEntries(Object.entries(faults).sort(([left], [right]) => (left < right ? -1 : 1)));
  return { written, rejected, infra_errors: infraErrors, completed, faults_fired: faultsFired, rejections, infra_failures: infraFailures };
}
