// Owns the generation worker threads seen from the main thread: starting them
// (each loads the TypeScript sources through tsx, the way the CLI does),
// handing one a part to run, relaying its episodes as they finish, asking all
// of them to stop, and shutting them down.

import { Worker } from 'node:worker_threads';
import type { FromWorker, ToWorker, WorkerSetup } from './generation-worker.js';
import type { EpisodeOutcome } from './part-production.js';
import type { PartSummary } from './run-parts.js';

export interface GenerationWorker {
  run(start: number, end: number, onEpisode: (outcome: EpisodeOutcome) => void): Promise<PartSummary | undefined>;
  stop(): void;
  terminate(): Promise<void>;
}

/** Registers tsx inside the new thread first: loader hooks are per thread, the main thread's do not carry over. */
function bootstrap(): string {
  const tsx = import.meta.resolve('tsx/esm/api');
  const entry = new URL('./generation-worker.ts', import.meta.url).href;
  return `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(entry)}); });`;
}

/**
 * A worker's heap is capped so that V8 collects instead of growing: an
 * episode's garbage is short-lived and a part's lines are a few megabytes, so
 * this is room enough, and N workers stay within a flat memory budget.
 */
export const WORKER_HEAP_MB = 96;
/** The young generation is where an episode's garbage dies: 8 MB cost a third of a worker's speed in collections, 32 MB does not. */
export const WORKER_YOUNG_MB = 32;

export function startWorker(setup: WorkerSetup): GenerationWorker {
  const worker = new Worker(bootstrap(), { eval: true, workerData: setup, resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB, maxYoungGenerationSizeMb: WORKER_YOUNG_MB } });
  let current: { resolve: (part: PartSummary | undefined) => void; reject: (error: Error) => void; onEpisode: (outcome: EpisodeOutcome) => void } | undefined;
  let failure: Error | undefined;
  let closed: (() => void) | undefined;
  const fail = (error: Error) => {
    failure ??= error;
    current?.reject(error);
    current = undefined;
  };
  worker.on('message', (message: FromWorker) => {
    if (message.type === 'episode') current?.onEpisode({ record_id: message.record_id, status: message.status, task_completed: message.task_completed });
    else if (message.type === 'part') {
      const settle = current;
      current = undefined;
      settle?.resolve(message.part ?? undefined);
    } else if (message.type === 'closed') closed?.();
    else fail(new Error(`a generation worker failed: ${message.message}`));
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
      if (!failure) {
        await new Promise<void>((resolve) => {
          closed = resolve;
          setTimeout(resolve, 5_000).unref();
          worker.postMessage({ type: 'close' } satisfies ToWorker);
        });
      }
      await worker.terminate();
    },
  };
}
