// Owns `lanes synthesize` as a whole: drawing candidates in order, each
// tried (candidate-trial.ts) on this thread or on worker threads, and kept in
// draw order until the count is reached. A candidate whose predicates are
// those of a task kept before it is a twin and is not proven; which draws are
// twins, which are kept and when the run stops are decided in draw order, so
// the same world, seeds and count give the same lane, byte for byte, whatever
// the number of threads.

import type { LaneDocument, Task } from '../lanes/lane.js';
import { isBuiltInWorld } from '../world/world-registry.js';
import { openTrialRun, prepareCandidate, proveCandidate, SAMPLER_SOURCE, type Attempt, type CandidateEvent, type CandidateSource, type Prepared, type TrialRun, type TrialSettings } from './candidate-trial.js';
import { startSynthesisPool, type CandidateTrials } from './synthesis-pool.js';

export { SAMPLER, SAMPLER_SOURCE, SYNTHESIS_PRODUCED_AT, type CandidateEvent, type CandidateSource, type RejectionReason, type SourceContext } from './candidate-trial.js';

export interface SynthesisOptions extends TrialSettings {
  /** How many sound tasks to keep. */
  count: number;
  /** Give up after this many candidates (default 20 × count). */
  maxCandidates?: number;
  onCandidate?: (event: CandidateEvent) => void;
  /** Where candidates come from (default: the seeded sampler). */
  source?: CandidateSource;
  /**
   * Threads to try candidates on (default 1: this thread). Only the seeded sampler on a world every thread finds
   * by name runs on several; a writer model's draws are asked in order on this thread.
   */
  workers?: number;
}

export interface SynthesisResult {
  document: LaneDocument;
  events: CandidateEvent[];
}

export async function synthesizeLane(options: SynthesisOptions): Promise<SynthesisResult> {
  const { count, maxCandidates, onCandidate, source, workers, ...settings } = options;
  const run = await openTrialRun(settings, source ?? SAMPLER_SOURCE);
  const threads = source === undefined && isBuiltInWorld(settings.world) ? Math.max(1, workers ?? 1) : 1;
  const trials = threads > 1 ? startSynthesisPool(settings, threads) : onThisThread(run);
  try {
    const { events, kept } = await tryInOrder(trials, count, maxCandidates ?? count * 20, onCandidate);
    return { document: { ...run.base, tasks: kept }, events };
  } finally {
    await trials.close();
  }
}

function onThisThread(run: TrialRun): CandidateTrials {
  return {
    window: 1,
    prepare: (draw) => prepareCandidate(run, draw),
    prove: (draw, task, tools) => proveCandidate(run, draw, task, tools),
    close: async () => undefined,
  };
}

/**
 * Draws are started up to the trials' window ahead of the oldest one not yet kept or rejected. A prepared
 * draw waits until every earlier draw is prepared; then, if an earlier draw has the same key, for the latest
 * such one to end: it is a twin if a task with that key was kept, and is proven otherwise. The results are
 * taken in draw order, and the first `count` kept tasks end the run, as one thread trying one draw at a time.
 */
export async function tryInOrder(trials: CandidateTrials, count: number, limit: number, onCandidate?: (event: CandidateEvent) => void): Promise<{ events: CandidateEvent[]; kept: Task[] }> {
  const prepared: Promise<Prepared>[] = [];
  /** Resolves once draw d and every draw before it are prepared. */
  const preparedThrough: Promise<unknown>[] = [];
  const outcomes: Promise<Attempt>[] = [];
  const drawsByKey = new Map<string, number[]>();
  const keptByKey = new Map<string, string>();
  let started = 0;
  const start = (draw: number) => {
    // A key is on record as its draw is prepared, so once every earlier draw is, so are their keys.
    prepared[draw] = trials.prepare(draw).then((ready) => {
      if (!('rejected' in ready)) drawsByKey.set(ready.key, [...(drawsByKey.get(ready.key) ?? []), draw]);
      return ready;
    });
    preparedThrough[draw] = draw === 0 ? prepared[draw]! : Promise.all([preparedThrough[draw - 1], prepared[draw]]);
    outcomes[draw] = (async (): Promise<Attempt> => {
      const ready = await prepared[draw]!;
      if ('rejected' in ready) return ready.rejected;
      if (draw > 0) await preparedThrough[draw - 1];
      // Keys are recorded as draws finish preparing, in any order: the latest earlier draw is the greatest.
      const earlier = drawsByKey.get(ready.key)!.filter((other) => other < draw);
      if (earlier.length > 0) await outcomes[Math.max(...earlier)];
      const twin = keptByKey.get(ready.key);
      if (twin) return { draw, kept: false, tools: ready.tools, reason: 'duplicate', detail: `its solution and predicates are those of ${twin}` };
      const attempt = await trials.prove(draw, ready.task, ready.tools);
      if (attempt.kept) keptByKey.set(ready.key, ready.task.id);
      return attempt;
    })();
    // A draw started ahead of the end is abandoned, not awaited: its failure is not the run's.
    outcomes[draw].catch(() => undefined);
    preparedThrough[draw]!.catch(() => undefined);
  };
  const events: CandidateEvent[] = [];
  const kept: Task[] = [];
  for (let draw = 0; draw < limit && kept.length < count; draw++) {
    while (started < limit && started < draw + trials.window) start(started++);
    const { taskDefinition, ...event } = await outcomes[draw]!;
    if (event.kept && taskDefinition) kept.push(taskDefinition);
    events.push(event);
    onCandidate?.(event);
  }
  return { events, kept };
}
