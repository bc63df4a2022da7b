// Owns the generation worker threads seen from the main thread: starting them
// (each runs the sources compiled once into a cache, see worker-build.ts, or
// through tsx when they cannot be compiled), handing one a part to run, relaying its episodes as they finish, asking all
// of them to stop, and shutting them down.

import { Worker } from 'node:worker_threads';
import type { FromWorker, ToWorker, WorkerSetup } from './generation-worker.js';
import { workerEntry } from './worker-build.js';
import type { EpisodeOutcome } from './part-production.js';
import type { PartSummary } from './run-parts.js';

export interface GenerationWorker {
  run(start: number, end: number, onEpisode: (outcome: EpisodeOutcome) => void): Promise<PartSummary | undefined>;
  stop(): void;
  terminate(): Promise<void>;
}

/**
 * What a new thread evaluates. Compiled: it imports the compiled entry, and
 * only if that has vanished (a cache cleared under a running process) loads
 * the sources through tsx instead. Not compiled: it registers tsx inside the
 * thread first: loader hooks are per thread, the main thread's do not carry over.
 */
function bootstrap(): { code: string; compiled: boolean } {
  const entry = workerEntry();
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  const source = JSON.stringify(new URL('./generation-worker.ts', import.meta.url).href);
  const throughTsx = `import(${tsx}).then((api) => { api.register(); return import(${source}); })`;
  if (!entry.compiled) return { code: `${throughTsx};`, compiled: false };
  return {
    code: `import(${JSON.stringify(entry.url)}).catch((error) => { if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !String(error.message).includes(${JSON.stringify(entry.cacheName)})) throw error; return ${throughTsx}; });`,
    compiled: true,
  };
}

/** The parent's Node flags minus the ones that load tsx: a thread on compiled JavaScript does not need it (it costs a fifth of a second per thread). */
export function flagsWithoutTsx(flags: readonly string[]): string[] {
  const out: string[] = [];
  for (let index = 0; index < flags.length; index++) {
    const flag = flags[index]!;
    const [name, inline] = flag.includes('=') ? [flag.slice(0, flag.indexOf('=')), flag.slice(flag.indexOf('=') + 1)] : [flag, undefined];
    if (['--import', '--loader', '--experimental-loader', '--require', '-r'].includes(name!)) {
      const value = inline ?? flags[index + 1];
      if (value !== undefined && /(^|[\\/])tsx([\\/]|$)/.test(value)) {
        if (inline === undefined) index++;
        continue;
      }
    }
    out.push(flag);
  }
  return out;
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
  const { code, compiled } = bootstrap();
  const worker = new Worker(code, {
    eval: true,
    workerData: setup,
    ...(compiled ? { execArgv: flagsWithoutTsx(process.execArgv) } : {}),
    resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB, maxYoungGenerationSizeMb: WORKER_YOUNG_MB },
  });
  let current: { resolve: (part: PartSummary | undefined) => void; reject: (error: Error) => void; onEpisode: (outcome: EpisodeOutcome) => void } | undefined;
  let failure: Error | undefined;
  let closed: (() => void) | undefined;
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
