// Owns the inside of a replay worker thread (`replay --workers`, `audit
// --workers`): it replays each batch of record lines it is handed, in order,
// and sends back one verdict per line. Asked to close, it ends the server
// children its worlds kept.

import { parentPort, workerData } from 'node:worker_threads';
import { serveJobs, type CarriedError } from '../generation/soundness-worker.js';
import { replayRow, type LineVerdict, type ReplayMode, type RowToReplay } from './record-replay.js';

export interface ReplayJob {
  /** The batch's place in the file, which orders the results. */
  index: number;
  mode: ReplayMode;
  /** A lane file to use instead of each record's lane by name. */
  lane?: string;
  rows: RowToReplay[];
}

export type ToReplayWorker = { type: 'replay'; job: ReplayJob } | { type: 'close' };
export type FromReplayWorker = { type: 'verdicts'; index: number; verdicts: LineVerdict[] } | { type: 'failed'; index: number; error: CarriedError } | { type: 'closed' };

/** What the main thread starts this module's threads with, so a thread started for anything else never answers as one. */
export const REPLAY_WORKER_DATA = { role: 'replay' } as const;

const port = parentPort;
if (port && (workerData as { role?: string } | null)?.role === REPLAY_WORKER_DATA.role) {
  serveJobs<ReplayJob, FromReplayWorker>(
    port,
    async (job) => {
      const verdicts: LineVerdict[] = [];
      for (const row of job.rows) verdicts.push(await replayRow(row, job.mode, job.lane));
      return { type: 'verdicts', index: job.index, verdicts };
    },
    (job, error) => ({ type: 'failed', index: job.index, error }),
  );
}
