// Owns the inside of a generation worker thread: it rebuilds the run's plan
// from the lane and selection it was started with (the same function, so the
// same plan), then produces whichever parts the main thread hands it and
// reports every episode (a few times a second, in batches) and every sealed
// part back. Only scripted policies run here: they are pure data, so each
// thread can build its own.

import { parentPort, workerData } from 'node:worker_threads';
import { errorMessage } from '../core/errors.js';
import { episodePlan } from '../lanes/episode-plan.js';
import type { Lane, SeedRange } from '../lanes/lane.js';
import { producePart, type EpisodeOutcome, type PartContext } from './part-production.js';
import { policyFactoryFor } from '../selection/scripted-policy-factory.js';
import type { PartSummary } from './run-parts.js';
import { closeKeptChildren } from '../world/servers/server-pool.js';

export interface WorkerSetup {
  lane: Lane;
  seeds: SeedRange;
  tasks: string[] | undefined;
  variants: string[] | undefined;
  producedAt: string;
  staging: string;
  runId: string;
  /** Build each part's Arrow columns (the run writes Arrow or Parquet). */
  columnar: boolean;
}

export type ToWorker = { type: 'run'; start: number; end: number } | { type: 'stop' } | { type: 'close' };
export type FromWorker =
  /** Finished episodes since the last report, in order: sent at most every PROGRESS_MS, and before their part. */
  | { type: 'episodes'; outcomes: EpisodeOutcome[] }
  | { type: 'part'; part: PartSummary | null }
  | { type: 'failed'; message: string }
  | { type: 'closed' };

/** How often a worker reports finished episodes: a message per episode cost about 3% of a worker's time. */
export const PROGRESS_MS = 100;

const port = parentPort;
if (port) {
  const setup = workerData as WorkerSetup;
  let stopping = false;
  let context: PartContext | undefined;
  const post = (message: FromWorker) => port.postMessage(message);
  port.on('message', (message: ToWorker) => {
    if (message.type === 'stop') {
      stopping = true;
      return;
    }
    if (message.type === 'close') {
      void closeKeptChildren().finally(() => post({ type: 'closed' }));
      return;
    }
    void (async () => {
      try {
        context ??= {
          plan: episodePlan(setup.lane, setup.seeds, setup.tasks, setup.variants),
          policy: policyFactoryFor(setup.lane),
          producedAt: setup.producedAt,
          staging: setup.staging,
          runId: setup.runId,
          concurrency: 1,
          // Workers only run scripted episodes.
          traceOnClose: true,
          columnar: setup.columnar,
        };
        let outcomes: EpisodeOutcome[] = [];
        let reported = performance.now();
        const report = () => {
          if (outcomes.length > 0) post({ type: 'episodes', outcomes });
          outcomes = [];
          reported = performance.now();
        };
        const part = await producePart(context, message.start, message.end, {
          shouldStop: () => stopping,
          onEpisode: (outcome) => {
            outcomes.push(outcome);
            if (performance.now() - reported >= PROGRESS_MS) report();
          },
        });
        report();
        post({ type: 'part', part: part ?? null });
      } catch (error) {
        post({ type: 'failed', message: errorMessage(error) });
      }
    })();
  });
}
