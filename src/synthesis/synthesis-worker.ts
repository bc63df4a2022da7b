// Owns the inside of a `lanes synthesize` worker thread: it opens the same
// trial run as the main thread (from the same settings, with the seeded
// sampler), then does one job at a time as it is handed them: prepare a draw's
// candidate, or prove one the main thread found to be no twin of a kept task.
// Asked to close, it ends the server children its worlds kept.

import { parentPort, workerData } from 'node:worker_threads';
import type { Task } from '../lanes/lane.js';
import { serveJobs, type CarriedError } from '../generation/soundness-worker.js';
import { openTrialRun, prepareCandidate, proveCandidate, type Attempt, type Prepared, type TrialRun, type TrialSettings } from './candidate-trial.js';

export type SynthesisJob = { type: 'prepare'; draw: number } | { type: 'prove'; draw: number; task: Task; tools: string[] };
export type ToSynthesisWorker = { type: 'job'; job: SynthesisJob } | { type: 'close' };
export type FromSynthesisWorker = { type: 'done'; result: Prepared | Attempt } | { type: 'failed'; error: CarriedError } | { type: 'closed' };

/** What the main thread starts this module's threads with; a thread started for anything else never answers as one. */
export const SYNTHESIS_WORKER_ROLE = 'lanes-synthesize';

const port = parentPort;
const data = workerData as { role?: string; settings?: TrialSettings } | null;
if (port && data?.role === SYNTHESIS_WORKER_ROLE && data.settings) {
  const settings = data.settings;
  let run: Promise<TrialRun> | undefined;
  serveJobs<SynthesisJob, FromSynthesisWorker>(
    port,
    async (job) => {
      run ??= openTrialRun(settings);
      const opened = await run;
      return { type: 'done', result: job.type === 'prepare' ? await prepareCandidate(opened, job.draw) : await proveCandidate(opened, job.draw, job.task, job.tools) };
    },
    (_job, error) => ({ type: 'failed', error }),
  );
}
