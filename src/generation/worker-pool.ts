// Owns the generation worker threads seen from the main thread: starting them
// (worker-thread.ts), handing one a part to run, relaying its episodes as they
// finish, asking all of them to stop, and shutting them down.

import type { FromWorker, ToWorker, WorkerSetup } from './generation-worker.js';
import { GENERATION_ENTRY } from './worker-build.js';
import { closeThread, startThread } from './worker-thread.js';
import type { EpisodeOutcome } from './part-production.js';
import type { PartSummary } from './run-parts.js';

export interface GenerationWorker {
  run(start: number, end: number, onEpisode: (outcome: EpisodeOutcome) => void): Promise<PartSummary | undefined>;
  stop(): void;
  terminate(): Promise<void>;
}

export function startWorker(setup: WorkerSetup): GenerationWorker {
  const worker = startThread(GENERATION_ENTRY, setup);
  let current: { resolve: (part: PartSummary | undefined) => void; reject: (error: Error) => void; onEpisode: (outcome: EpisodeOutcome) => void } | undefined;
  let failure: Error | undefined;
  const fail = (error: Error) => {
    failure ??= error;
    current?.reject(error);
    current = undefined;
  };
  worker.on('message', (message: FromWorker) => {
    if (message.type === 'episodes') for (const outcome of message.outcomes) current?.onEpisode(outcome);
    else if (message.type === 'part') {
      const settle = current;
      current = undefined;
      settle?.resolve(message.part ?? undefined);
    } else if (message.type !== 'closed') fail(new Error(`a generation worker failed: ${message.message}`));
  });
  worker.on('error', (error) => fail(new Error(`a generation worker crashed: ${error.message}`)));
  worker.on('exit', (code) => fail(new Error(`a generation worker exited (code ${code}) in the middle of a part`)));
  return {
    run(start, end, onEpisode) {
      if (failure) return Promise.reject(failure);
      return new Promise((resolve, reject) => {
        current = { resolve, reject, onEpisode };
        worker.postMessage({ type: 'run', start, end } satisfies ToWorker);
      });
    },
    stop() {
      worker.postMessage({ type: 'stop' } satisfies ToWorker);
    },
    async terminate() {
      current = undefined;
      // A kept server child and its directory are the thread's to clean up; a thread that does not answer in time is ended anyway.
      await closeThread(worker, !failure);
    },
  };
}
