// Owns replaying record lines on worker threads for `replay` and `audit`
// (`--workers N`): lines are handed out in batches as the file streams, at most
// a few batches per thread in flight, and the verdicts come back in file
// order, so what a command prints and reports is the same bytes whatever N.
// With one worker no thread starts: the lines are replayed on this thread.

import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { rethrown } from '../generation/soundness-worker.js';
import { closeThread, startThread } from '../generation/worker-thread.js';
import { replayRow, type LineVerdict, type ReplayMode, type RowToReplay } from './record-replay.js';
import { REPLAY_WORKER_DATA, type FromReplayWorker, type ReplayJob, type ToReplayWorker } from './replay-worker.js';

const REPLAY_ENTRY = 'dataset-replay/replay-worker';
/** With `workers: 'auto'`, this many records or more are replayed on every core: below it, starting threads costs more than they save. */
export const AUTO_WORKERS_FROM = 200;

/** The threads for `count` records: a number as given, `auto` one per core from AUTO_WORKERS_FROM records, 1 by default. */
export function threadsFor(workers: number | 'auto' | undefined, count: number): number {
  if (workers === 'auto') return count >= AUTO_WORKERS_FROM ? availableParallelism() : 1;
  return workers ?? 1;
}
/**
 * A replay thread's young generation. Replaying a record allocates about 0.9 MB that dies with it (snapshot copies,
 * their canonical text, the rebuilt record); with 32 MB, two threads on two cores replayed 25,000 records in 31.0 s,
 * with 64 MB in 28.1 s (one thread: 42.8 s), for about 45 MB more per thread. 96 MB was no faster.
 */
const REPLAY_YOUNG_MB = 64;
/** Lines per batch: enough to amortise a message, few enough that a batch's records are a few megabytes. */
export const REPLAY_BATCH = 32;
/**
 * Batches in flight per thread. Verdicts are delivered in file order, so a
 * thread that finished early must find more queued work while a slower one
 * holds the oldest batch: with two in flight it idled, and two threads
 * replayed 1.44 times as fast as one.
 */
const IN_FLIGHT_PER_THREAD = 4;

export interface ReplayPoolOptions {
  workers: number;
  mode: ReplayMode;
  lane?: string;
}

/**
 * Items in the order given, each with the verdict of its line, through
 * `onVerdict`. An item added without a line (one the caller decided itself: a
 * corrupt line, a repeated id) is delivered in its place with no verdict, so
 * everything comes out in file order.
 */
export class ReplayPool<Item> {
  private readonly threads: ReplayThread[];
  private batch: { item: Item; row?: RowToReplay }[] = [];
  private readonly pending: { entries: { item: Item; row?: RowToReplay }[]; verdicts: Promise<LineVerdict[]> }[] = [];
  private nextIndex = 0;

  constructor(private readonly options: ReplayPoolOptions, private readonly onVerdict: (item: Item, verdict: LineVerdict | undefined) => void) {
    this.threads = options.workers > 1 ? Array.from({ length: options.workers }, () => new ReplayThread()) : [];
  }

  /** Adds an item (with its line to replay, or none); waits when enough batches are in flight, delivering the oldest batch's. */
  async add(item: Item, row?: RowToReplay): Promise<void> {
    if (this.threads.length === 0) {
      this.onVerdict(item, row ? await replayRow(row, this.options.mode, this.options.lane) : undefined);
      return;
    }
    this.batch.push(row ? { item, row } : { item });
    if (this.batch.length >= REPLAY_BATCH) await this.send();
  }

  private async send(): Promise<void> {
    if (this.batch.length === 0) return;
    const entries = this.batch;
    this.batch = [];
    const rows = entries.flatMap((entry) => (entry.row ? [entry.row] : []));
    const job: ReplayJob = { index: this.nextIndex++, mode: this.options.mode, ...(this.options.lane === undefined ? {} : { lane: this.options.lane }), rows };
    // To the thread with the least queued (the first of equals): a thread slowed by a long record gets less, not its turn.
    const thread = this.threads.reduce((least, candidate) => (candidate.queued < least.queued ? candidate : least));
    this.pending.push({ entries, verdicts: rows.length === 0 ? Promise.resolve([]) : thread.replay(job) });
    while (this.pending.length >= this.threads.length * IN_FLIGHT_PER_THREAD) await this.deliverOldest();
  }

  private async deliverOldest(): Promise<void> {
    const oldest = this.pending.shift()!;
    const verdicts = await oldest.verdicts;
    let next = 0;
    for (const entry of oldest.entries) this.onVerdict(entry.item, entry.row ? verdicts[next++]! : undefined);
  }

  /** Sends what is left, delivers every verdict, and ends the threads. */
  async finish(): Promise<void> {
    try {
      await this.send();
      while (this.pending.length > 0) await this.deliverOldest();
    } finally {
      await this.close();
    }
  }

  /** Ends the threads without waiting for the verdicts in flight (a failed run). */
  async close(): Promise<void> {
    for (const entry of this.pending) entry.verdicts.catch(() => undefined);
    await Promise.all(this.threads.map((thread) => thread.close()));
  }
}

/** One worker thread: jobs answered in the order sent (the thread replays them one after another). */
class ReplayThread {
  private readonly worker: Worker;
  private readonly waiting = new Map<number, { resolve: (verdicts: LineVerdict[]) => void; reject: (error: unknown) => void }>();
  private crashed: Error | undefined;

  constructor() {
    this.worker = startThread(REPLAY_ENTRY, REPLAY_WORKER_DATA, REPLAY_YOUNG_MB);
    this.worker.on('message', (message: FromReplayWorker) => {
      if (message.type === 'closed') return;
      const waiter = this.waiting.get(message.index);
      this.waiting.delete(message.index);
      if (message.type === 'verdicts') waiter?.resolve(message.verdicts);
      else waiter?.reject(rethrown(message.error));
    });
    const crash = (error: Error) => {
      this.crashed ??= error;
      for (const waiter of this.waiting.values()) waiter.reject(error);
      this.waiting.clear();
    };
    this.worker.on('error', (error) => crash(new Error(`a replay worker crashed: ${error.message}`)));
    this.worker.on('exit', (code) => crash(new Error(`a replay worker exited (code ${code}) in the middle of a batch`)));
  }

  /** Batches sent and not yet answered. */
  get queued(): number {
    return this.waiting.size;
  }

  replay(job: ReplayJob): Promise<LineVerdict[]> {
    if (this.crashed) return Promise.reject(this.crashed);
    return new Promise((resolve, reject) => {
      this.waiting.set(job.index, { resolve, reject });
      this.worker.postMessage({ type: 'replay', job } satisfies ToReplayWorker);
    });
  }

  close(): Promise<void> {
    return closeThread(this.worker, !this.crashed);
  }
}
