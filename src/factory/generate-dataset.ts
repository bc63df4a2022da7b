// Owns `generate`: plan the lane's episodes, produce each one, validate it
// against the record schema, replay it from its own serialized record, and
// write it to episodes.jsonl, or to rejected.jsonl with the reason. Output
// goes to a staging directory first and replaces the old dataset only when
// the run is complete, so a crash never leaves a half-old, half-new dataset.

import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { errorMessage, FactoryError } from '../core/errors.js';
import { planEpisodes, specRecordId, type EpisodeSpec } from '../lanes/episode-plan.js';
import type { Lane, SeedRange } from '../lanes/lane.js';
import { formatSeedRange } from '../lanes/seed-range.js';
import { TaskBindingError } from '../lanes/task-instance.js';
import type { EpisodeRecord, RejectedRow } from '../records/episode-record.js';
import { ARROW_FILE, COLUMNAR_FORMATS, PARQUET_FILE, writeColumnar } from '../records/columnar-files.js';
import { JsonlAppender } from '../records/jsonl.js';
import { MANIFEST_FILE, writeManifest } from '../records/manifest.js';
import { validateAgainst } from '../records/schema-registry.js';
import { Trace } from '../runner/trace.js';
import { FACTORY_VERSION } from '../core/package-paths.js';
import { produceEpisode } from '../verify/episode-production.js';
import { replayRecord } from '../verify/replay.js';
import { policyFactoryFor, type PreparedPolicy } from './policy-selection.js';
import { resolveProducedAt } from './produced-at.js';

export const EPISODES_FILE = 'episodes.jsonl';
export const REJECTED_FILE = 'rejected.jsonl';
export const TRACES_DIR = 'traces';
const STAGING_DIR = '.partial';

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
  /** Episodes in flight at once (against one Ollama server, keep it small). Default 1. */
  concurrency?: number;
  /** Default: all three. JSONL is always among them: every other operation reads it. */
  formats?: readonly OutputFormat[];
  onEpisode?: (progress: EpisodeProgress) => void;
}

export interface EpisodeProgress {
  done: number;
  total: number;
  record_id: string;
  status: 'written' | 'rejected';
  task_completed: boolean;
}

export interface GenerateSummary {
  lane: string;
  lane_sha256: string;
  out_dir: string;
  seeds: string;
  tasks: string[];
  episodes: number;
  written: number;
  rejected: number;
  completed: number;
  completion_rate: number;
  /** Faults fired across the written records, by kind. */
  faults_fired: Record<string, number>;
  wall_seconds: number;
  rejections: { record_id: string; stage: string; reason: string }[];
}

/** What verifying one episode came to: a record to write, or a row for rejected.jsonl. */
type EpisodeResult =
  | { status: 'written'; id: string; record: EpisodeRecord; line: string }
  | { status: 'rejected'; id: string; row: RejectedRow };

export async function generateDataset(options: GenerateOptions): Promise<GenerateSummary> {
  const started = performance.now();
  const { lane, outDir } = options;
  const seeds = options.seeds ?? lane.seeds;
  const prepared = options.policy ?? { factory: policyFactoryFor(lane) };
  const plan = planEpisodes(lane, seeds, options.tasks, options.variants, prepared.policy);
  const producedAt = resolveProducedAt(lane);
  const concurrency = options.concurrency ?? 1;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new FactoryError('usage', `--concurrency ${concurrency} is not a positive whole number`, { fix: 'pass --concurrency 1 (the default) or more' });
  }
  const runId = `run-${randomUUID()}`;

  assertDatasetDirectory(outDir);
  const staging = join(outDir, STAGING_DIR);
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(join(staging, TRACES_DIR), { recursive: true });
  const episodes = new JsonlAppender(join(staging, EPISODES_FILE));
  const rejected = new JsonlAppender(join(staging, REJECTED_FILE));
  const traceFiles = plan.map((spec) => `${specRecordId(spec)}.jsonl`);
  const rejections: GenerateSummary['rejections'] = [];
  let completed = 0;
  const faultsFired: Record<string, number> = {};

  const verifyEpisode = async (spec: EpisodeSpec): Promise<EpisodeResult> => {
    const id = specRecordId(spec);
    const trace = new Trace(runId, new JsonlAppender(join(staging, TRACES_DIR, `${id}.jsonl`)));
    const reject = (stage: RejectedRow['stage'], reason: string, record: EpisodeRecord | null): EpisodeResult => {
      trace.phase('verify').emit('record_rejected', { stage, reason });
      return { status: 'rejected', id, row: { record_id: id, lane: lane.name, task: spec.task.id, seed: spec.seed, stage, reason, record } };
    };
    try {
      const record = await produceEpisode(spec, prepared.factory, { producedAt, trace: trace.phase('generate') });
      const line = JSON.stringify(record);
      const schemaErrors = validateAgainst('episode-record.v1', record);
      if (schemaErrors.length > 0) return reject('schema', schemaErrors.map((error) => `${error.path || '/'}: ${error.reason}`).join('; '), record);
      // Replay what will be stored, not the object in memory: a value that
      // does not survive JSON serialization must fail here, not later.
      const verdict = await replayRecord(JSON.parse(line), lane, { trace: trace.phase('replay'), text: line });
      if (!verdict.ok) return reject('replay', verdict.problems.join('; '), record);
      trace.phase('verify').emit('record_written', { task_completed: record.result.task_completed });
      return { status: 'written', id, record, line };
    } catch (error) {
      return reject(error instanceof TaskBindingError ? 'plan' : 'run', errorMessage(error), null);
    } finally {
      trace.close();
    }
  };

  // Up to `concurrency` episodes run at once; results are written in plan
  // order, so the files are the same bytes whatever the concurrency.
  const write = (result: EpisodeResult, done: number) => {
    let taskCompleted = false;
    if (result.status === 'written') {
      episodes.append(result.record, result.line);
      taskCompleted = result.record.result.task_completed;
      if (taskCompleted) completed++;
      for (const fault of result.record.recovery.faults_fired) faultsFired[fault.kind] = (faultsFired[fault.kind] ?? 0) + 1;
    } else {
      rejected.append(result.row);
      rejections.push({ record_id: result.id, stage: result.row.stage, reason: result.row.reason });
    }
    options.onEpisode?.({ done, total: plan.length, record_id: result.id, status: result.status, task_completed: taskCompleted });
  };

  try {
    const pending = new Map<number, Promise<EpisodeResult>>();
    let next = 0;
    for (let written = 0; written < plan.length; written++) {
      while (next < plan.length && pending.size < concurrency) {
        pending.set(next, verifyEpisode(plan[next]!));
        next++;
      }
      const result = await pending.get(written)!;
      pending.delete(written);
      write(result, written + 1);
    }
  } finally {
    // Whatever happened, what was written stays on disk, flushed.
    episodes.close({ sync: true });
    rejected.close({ sync: true });
  }
  const formats = new Set(options.formats ?? OUTPUT_FORMATS);
  await writeColumnar(join(staging, EPISODES_FILE), {
    ...(formats.has('arrow') ? { arrow: join(staging, ARROW_FILE) } : {}),
    ...(formats.has('parquet') ? { parquet: join(staging, PARQUET_FILE) } : {}),
  });
  publish(staging, outDir);

  const tasks = [...new Set(plan.map((spec) => spec.task.id))];
  const columnarFiles = [...(formats.has('arrow') ? [join(outDir, ARROW_FILE)] : []), ...(formats.has('parquet') ? [join(outDir, PARQUET_FILE)] : [])];
  await writeManifest(
    outDir,
    {
      operation: 'generate',
      lanes: [{ name: lane.name, sha256: lane.sha256 }],
      lane: lane.name,
      lane_sha256: lane.sha256,
      factory_version: FACTORY_VERSION,
      seeds: formatSeedRange(seeds),
      tasks,
      counts: { episodes: plan.length, records: episodes.rows, rejected: rejected.rows, completed },
    },
    [join(outDir, EPISODES_FILE), join(outDir, REJECTED_FILE), ...columnarFiles, ...traceFiles.map((file) => join(outDir, TRACES_DIR, file))],
  );

  return {
    lane: lane.name,
    lane_sha256: lane.sha256,
    out_dir: outDir,
    seeds: formatSeedRange(seeds),
    tasks,
    episodes: plan.length,
    written: episodes.rows,
    rejected: rejected.rows,
    completed,
    completion_rate: episodes.rows === 0 ? 0 : completed / episodes.rows,
    faults_fired: Object.fromEntries(Object.entries(faultsFired).sort(([left], [right]) => (left < right ? -1 : 1))),
    wall_seconds: Math.round(performance.now() - started) / 1000,
    rejections,
  };
}

/**
 * Publishing replaces `traces/` and the dataset files, so the output directory
 * must be new, empty, or an earlier dataset: never a directory of other things.
 */
function assertDatasetDirectory(outDir: string): void {
  if (!existsSync(outDir)) return;
  if (!statSync(outDir).isDirectory()) {
    throw new FactoryError('usage', `--out ${outDir} is a file`, { fix: 'choose a directory path for --out' });
  }
  const entries = readdirSync(outDir);
  const known = new Set([EPISODES_FILE, REJECTED_FILE, ARROW_FILE, PARQUET_FILE, TRACES_DIR, MANIFEST_FILE, STAGING_DIR]);
  if (entries.length > 0 && !entries.some((entry) => entry === EPISODES_FILE || entry === MANIFEST_FILE || entry === STAGING_DIR)) {
    const strangers = entries.filter((entry) => !known.has(entry)).slice(0, 3);
    throw new FactoryError('usage', `--out ${outDir} is not empty and holds no dataset (it has ${strangers.join(', ')}${entries.length > 3 ? ', …' : ''})`, {
      fix: 'choose a new or empty directory; generate replaces traces/ and the dataset files in it',
    });
  }
}

/** Moves a finished run from staging into place, replacing the previous dataset's files. */
function publish(staging: string, outDir: string): void {
  rmSync(join(outDir, MANIFEST_FILE), { force: true });
  for (const file of [EPISODES_FILE, REJECTED_FILE, ARROW_FILE, PARQUET_FILE]) {
    // A format this run did not write must not survive from an earlier run.
    if (existsSync(join(staging, file))) renameSync(join(staging, file), join(outDir, file));
    else rmSync(join(outDir, file), { force: true });
  }
  rmSync(join(outDir, TRACES_DIR), { recursive: true, force: true });
  renameSync(join(staging, TRACES_DIR), join(outDir, TRACES_DIR));
  rmSync(staging, { recursive: true, force: true });
}
