// Owns the worker threads of `lanes synthesize` seen from the main thread:
// starting them on the run's settings, handing out jobs (a draw to prepare, a
// candidate to prove) lowest draw first, so the draws the main thread waits on
// to keep its order are the ones done first, and shutting them down once the
// jobs in flight end. A thread that crashes fails every job it holds and every
// job still queued.

import { closeThread, startThread } from '../generation/worker-thread.js';
import { rethrown } from '../generation/soundness-worker.js';
import type { Task } from '../lanes/lane.js';
import type { Attempt, Prepared, TrialSettings } from './candidate-trial.js';
import { SYNTHESIS_WORKER_ROLE, type FromSynthesisWorker, type SynthesisJob, type ToSynthesisWorker } from './synthesis-worker.js';

const SYNTHESIS_ENTRY = 'synthesis/synthesis-worker';

/** Where a draw is prepared and a candidate proven: on this thread, or on worker threads. */
export interface CandidateTrials {
  /** How many draws may be in flight at once (1: one after another, as on one thread). */
  readonly window: number;
  prepare(draw: number): Promise<Prepared>;
  prove(draw: number, task: Task, tools: string[]): Promise<Attempt>;
  close(): Promise<void>;
}

interface Queued {
  job: SynthesisJob;
  resolve: (result: Prepared | Attempt) => void;
  reject: (error: unknown) => void;
}

/** `threads` worker threads, each opening the run from `settings` with the seeded sampler. */
export function startSynthesisPool(settings: TrialSettings, threads: number): CandidateTrials {
  const queue: Queued[] = [];
  let crashed: Error | undefined;
  const workers = Array.from({ length: threads }, () => {
    const thread = startThread(SYNTHESIS_ENTRY, { role: SYNTHESIS_WORKER_ROLE, settings });
    const state: { current?: Queued } = {};
    const crash = (error: Error) => {
      crashed ??= error;
      state.current?.reject(error);
      state.current = undefined;
      for (const waiting of queue.splice(0)) waiting.reject(error);
    };
    thread.on('message', (message: FromSynthesisWorker) => {
      // closeThread waits for this answer to a close itself.
      if (message.type === 'closed') return;
      const settled = state.current;
      state.current = undefined;
      if (message.type === 'done') settled?.resolve(message.result);
      else settled?.reject(rethrown(message.error));
      pump();
    });
    thread.on('error', (error) => crash(new Error(`a lanes synthesize worker crashed: ${error.message}`)));
    thread.on('exit', (code) => crash(new Error(`a lanes synthesize worker exited (code ${code}) in the middle of a draw`)));
    return { thread, state };
  });
  const pump = () => {
    for (const worker of workers) {
      if (worker.state.current || queue.length === 0 || crashed) continue;
      const next = queue.shift()!;
      worker.state.current = next;
      worker.thread.postMessage({ type: 'job', job: next.job } satisfies ToSynthesisWorker);
    }
  };
  const submit = <T extends Prepared | Attempt>(job: SynthesisJob): Promise<T> => {
    if (crashed) return Promise.reject(crashed);
    return new Promise<T>((resolve, reject) => {
      // Lowest draw first; at one draw, its proof before anything later.
      const at = queue.findIndex((waiting) => waiting.job.draw > job.draw);
      queue.splice(at === -1 ? queue.length : at, 0, { job, resolve: resolve as (result: Prepared | Attempt) => void, reject });
      pump();
    });
  };
  return {
    // Enough draws ahead to keep every thread busy while the oldest waits on its twins.
    window: threads * 4,
    prepare: (draw) => submit<Prepared>({ type: 'prepare', draw }),
    prove: (draw, task, tools) => submit<Attempt>({ type: 'prove', draw, task, tools }),
    async close() {
      for (const waiting of queue.splice(0)) waiting.reject(new Error('lanes synthesize stopped before this draw was tried'));
      // A job in flight is let finish (its world's directory and children are its own to clean up); then each thread ends its kept children.
      await Promise.all(
        workers.map(async (worker) => {
          const running = worker.state.current;
          if (!crashed && running) await new Promise<void>((resolve) => (worker.state.current = { ...running, resolve: () => resolve(), reject: () => resolve() }));
          await closeThread(worker.thread, !crashed);
        }),
      );
    },
  };
}
