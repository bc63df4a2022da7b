// Owns starting a worker thread on the factory's sources: the thread imports the
// sources compiled once into a cache (worker-build.ts), or loads them through
// tsx when they cannot be compiled, with the Node flags and the heap caps every
// worker runs under. Generation's workers and lanes check's both start here.

import { Worker } from 'node:worker_threads';
import { workerEntry } from './worker-build.js';

/**
 * What a new thread evaluates to run `entry` (a path under src/ without its extension). Compiled: it imports the
 * compiled entry, and only if that has vanished (a cache cleared under a running process) loads the sources through
 * tsx instead. Not compiled: it registers tsx inside the thread first: loader hooks are per thread, the main
 * thread's do not carry over.
 */
function bootstrap(entryPath: string): { code: string; compiled: boolean } {
  const entry = workerEntry(entryPath);
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  const source = JSON.stringify(new URL(`../${entryPath}.ts`, import.meta.url).href);
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

/**
 * A thread running `entry` (a path under src/ without its extension, e.g. generation/generation-worker), given
 * `workerData`, with a young generation of `youngMb` (WORKER_YOUNG_MB unless a pool measured better). It shares this
 * process's working directory.
 */
export function startThread(entry: string, workerData: unknown, youngMb = WORKER_YOUNG_MB): Worker {
  const { code, compiled } = bootstrap(entry);
  const options = { eval: true, workerData, resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB, maxYoungGenerationSizeMb: youngMb } };
  if (!compiled) return new Worker(code, options);
  try {
    return new Worker(code, { ...options, execArgv: flagsWithoutTsx(process.execArgv) });
  } catch (error) {
    // A flag of the whole process (`node --v8-pool-size=2 ...`) cannot be given to a thread, only inherited: the thread then loads tsx as well.
    if ((error as { code?: unknown }).code !== 'ERR_WORKER_INVALID_EXEC_ARGV') throw error;
    return new Worker(code, options);
  }
}

/**
 * Ends a job thread: one still alive is first asked to `close` (end the server
 * children its worlds kept) and waited for, until it answers `closed`, exits
 * or 5 seconds pass; then it is terminated. A crashed thread is only terminated.
 */
export async function closeThread(worker: Worker, alive: boolean): Promise<void> {
  if (alive) {
    await new Promise<void>((resolve) => {
      const onMessage = (message: { type?: unknown } | null) => {
        if (message?.type === 'closed') done();
      };
      const done = () => {
        worker.off('message', onMessage);
        worker.off('exit', done);
        resolve();
      };
      worker.on('message', onMessage);
      worker.once('exit', done);
      setTimeout(done, 5_000).unref();
      worker.postMessage({ type: 'close' });
    });
  }
  await worker.terminate();
}
