// Owns the inside of a `lanes check` worker thread: it loads each lane it is
// handed from the lane's file (in the process's working directory, so a lane
// outside lanes/ and a world defined under worlds/ are found as on the main
// thread), refuses one whose bytes changed since the main thread loaded it,
// proves one task at a time and sends the result back. Asked to close, it ends
// the server children its worlds kept.

import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { FactoryError, type ErrorCode, type Problem } from '../core/errors.js';
import type { Lane, SeedRange } from '../lanes/lane.js';
import { loadLane } from '../lanes/lane-loader.js';
import { checkTaskSoundness, type TaskSoundness } from '../verify/lane-soundness.js';
import { closeKeptChildren } from '../world/servers/server-pool.js';

/** One task to prove: the lane by its file and hash, the task by its place in the lane. */
export interface SoundnessJob {
  /** The job's place in the whole check, which orders the results. */
  index: number;
  lanePath: string;
  laneSha256: string;
  task: number;
  seeds: SeedRange;
}

/** An error as it crosses the thread boundary: enough to throw the same FactoryError (or Error) again on the main thread. */
export interface CarriedError {
  message: string;
  code?: ErrorCode;
  fix?: string;
  problems?: Problem[];
}

export type ToSoundnessWorker = { type: 'check'; job: SoundnessJob } | { type: 'close' };
export type FromSoundnessWorker = { type: 'task'; index: number; result: TaskSoundness } | { type: 'failed'; index: number; error: CarriedError } | { type: 'closed' };

export function carryError(error: unknown): CarriedError {
  if (error instanceof FactoryError) {
    return { message: error.message, code: error.code, ...(error.fix === undefined ? {} : { fix: error.fix }), ...(error.problems.length ? { problems: [...error.problems] } : {}) };
  }
  return { message: error instanceof Error ? error.message : String(error) };
}

export function rethrown(carried: CarriedError): Error {
  if (carried.code === undefined) return new Error(carried.message);
  return new FactoryError(carried.code, carried.message, { ...(carried.fix === undefined ? {} : { fix: carried.fix }), ...(carried.problems ? { problems: carried.problems } : {}) });
}

const lanes = new Map<string, Lane>();

function laneFor(job: SoundnessJob): Lane {
  let lane = lanes.get(job.lanePath);
  if (!lane) {
    lane = loadLane(job.lanePath);
    lanes.set(job.lanePath, lane);
  }
  if (lane.sha256 !== job.laneSha256) {
    throw new FactoryError('lane_invalid', `${job.lanePath} changed while lanes check was running (sha256 ${lane.sha256.slice(0, 12)}, not ${job.laneSha256.slice(0, 12)})`, {
      fix: 'leave the lane file alone until the check ends, then run it again',
    });
  }
  return lane;
}

/** What the main thread starts this module's threads with, so a thread started for anything else never answers as one. */
export const SOUNDNESS_WORKER_DATA = { role: 'lanes-check' } as const;

/**
 * A worker thread's message loop: each job is answered with what `work` resolves to, or with `failure` and the error
 * carried across; `close` ends the server children the thread's worlds kept, then says so. lanes synthesize's
 * threads run the same loop.
 */
export function serveJobs<Job, Reply>(port: MessagePort, work: (job: Job) => Promise<Reply>, failure: (job: Job, error: CarriedError) => Reply): void {
  port.on('message', (message: { type: 'close' } | { type: string; job: Job }) => {
    if (message.type === 'close') {
      void closeKeptChildren().finally(() => port.postMessage({ type: 'closed' }));
      return;
    }
    const { job } = message as { job: Job };
    void work(job).then(
      (reply) => port.postMessage(reply),
      (error: unknown) => port.postMessage(failure(job, carryError(error))),
    );
  });
}

const port = parentPort;
if (port && (workerData as { role?: string } | null)?.role === SOUNDNESS_WORKER_DATA.role) {
  serveJobs<SoundnessJob, FromSoundnessWorker>(
    port,
    async (job) => {
      const lane = laneFor(job);
      const task = lane.document.tasks[job.task];
      if (!task) throw new Error(`${job.lanePath} has no task ${job.task}`);
      return { type: 'task', index: job.index, result: await checkTaskSoundness(lane, task, job.seeds) };
    },
    (job, error) => ({ type: 'failed', index: job.index, error }),
  );
}
