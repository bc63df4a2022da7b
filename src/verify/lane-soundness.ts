// Owns proving a lane's hidden checks sound before any data is drawn from it.
// For every task, on several seeds, with no faults: the scripted solution must
// pass every predicate (and back every claim it makes); a policy that answers
// at once must fail; and each declared wrong trajectory (the wrong record, a
// near-twin tool, a forbidden side effect) must fail a predicate. A wrong
// trajectory caught only by the claims check does not count: the predicates
// themselves must see it. Every phrasing of the task's message must keep the
// facts those checks rely on (phrasing-soundness.ts).

import { errorMessage } from '../core/errors.js';
import type { EpisodeSpec } from '../lanes/episode-plan.js';
import type { Lane, SeedRange, Task, WrongTrajectory } from '../lanes/lane.js';
import { seedsOf } from '../lanes/seed-range.js';
import { DoNothingPolicy } from '../policy/do-nothing-policy.js';
import { ScriptedPolicy } from '../policy/scripted-policy.js';
import type { EpisodeRecord } from '../records/episode-record.js';
import { EMPTY_PLAN } from '../world/faults/fault-plan.js';
import { produceEpisode, type PolicyFactory } from './episode-production.js';
import { checkPhrasings, type PhrasingSoundness } from './phrasing-soundness.js';

/** How many of a lane's seeds a check plays when not told. */
export const DEFAULT_CHECK_SEEDS = 3;

export type TrajectoryKind = 'solution' | 'do-nothing' | 'wrong';

export interface TrajectoryRun {
  kind: TrajectoryKind;
  /** The wrong trajectory's id; absent for the solution and do-nothing. */
  id?: string;
  seed: number;
  /** Must every predicate pass (the solution) or must one fail (the rest)? */
  expected: 'pass' | 'fail';
  /** Ids of the predicates that failed. */
  failed: string[];
  /** Claims in the answer with no call behind them. */
  unsupported_claims: number;
  outcome: string;
  sound: boolean;
  /** Why it is unsound; absent when sound. */
  problem?: string;
}

export interface TaskSoundness {
  lane: string;
  task: string;
  tags: string[];
  seeds: number[];
  sound: boolean;
  runs: TrajectoryRun[];
  /** Every phrasing of the user message, rendered on every seed: does each keep the facts and values the checks need? */
  phrasing: Omit<PhrasingSoundness, 'problems'>;
  /** Everything that makes the task unsound, one sentence each. */
  problems: string[];
}

export interface SoundnessOptions {
  seeds?: SeedRange;
  taskIds?: readonly string[];
  /** Prove only this many of each lane's tasks, spread evenly through it (a spot-check of a long lane). */
  sample?: number;
  /** Called after each task, for progress. */
  onTask?: (result: TaskSoundness) => void;
  /** Stop a task's proof at the seed of its first unsound run (task synthesis needs one reason, not all of them). */
  stopEarly?: boolean;
}

/** The lane's first seeds, as many as DEFAULT_CHECK_SEEDS. */
export function defaultCheckSeeds(lane: Lane): SeedRange {
  return { from: lane.seeds.from, to: Math.min(lane.seeds.to, lane.seeds.from + DEFAULT_CHECK_SEEDS - 1) };
}

/** The tasks a check proves, in lane order: every task, or those `taskIds` names; `sample` of them, evenly spaced, when given. */
export function tasksToCheck(lane: Lane, taskIds?: readonly string[], sample?: number): Task[] {
  const chosen = lane.document.tasks.filter((task) => !taskIds?.length || taskIds.includes(task.id));
  if (sample === undefined || sample >= chosen.length) return chosen;
  return Array.from({ length: sample }, (_, index) => chosen[Math.floor((index * chosen.length) / sample)]!);
}

export async function checkLaneSoundness(lane: Lane, options: SoundnessOptions = {}): Promise<TaskSoundness[]> {
  const seeds = options.seeds ?? defaultCheckSeeds(lane);
  const results: TaskSoundness[] = [];
  for (const task of tasksToCheck(lane, options.taskIds, options.sample)) {
    const result = await checkTaskSoundness(lane, task, seeds, options.stopEarly === true);
    options.onTask?.(result);
    results.push(result);
  }
  return results;
}

/** One task's whole proof: what a worker thread of `lanes check` runs, a task at a time. */
/** One task's whole proof; with stopEarly it ends at the seed of its first unsound run (synthesis needs one reason). */
export async function checkTaskSoundness(lane: Lane, task: Task, seedRange: SeedRange, stopEarly = false): Promise<TaskSoundness> {
  // Soundness is about the predicates, not about recovering from faults.
  const quiet: Lane = { ...lane, faults: EMPTY_PLAN, variants: { clean: 1 } };
  const seeds = seedsOf(seedRange);
  const runs: TrajectoryRun[] = [];
  const problems: string[] = [];
  if (!task.wrong?.length) problems.push('declares no wrong trajectory: add at least one under "wrong" (the wrong record, a near-twin tool, a forbidden side effect)');
  for (const seed of seeds) {
    const spec: EpisodeSpec = { lane: quiet, task, seed, variant: 'clean' };
    runs.push(await play('solution', undefined, spec, scripted, 'pass'));
    // A solution with parallel groups must also pass when its calls go in one turn.
    if (task.solution.some((step) => 'parallel' in step)) runs.push(await play('solution', 'batched', spec, batched, 'pass'));
    runs.push(await play('do-nothing', undefined, spec, () => new DoNothingPolicy(), 'fail'));
    for (const wrong of task.wrong ?? []) {
      runs.push(await play('wrong', wrong.id, { ...spec, task: wrongTask(task, wrong) }, scripted, 'fail'));
    }
    if (stopEarly && runs.some((run) => !run.sound)) break;
  }
  for (const run of runs) if (run.problem) problems.push(`seed ${run.seed}: ${label(run)} ${run.problem}`);
  const { problems: wording, ...phrasing } = await checkPhrasings(quiet, task, seeds);
  problems.push(...wording);
  return { lane: lane.name, task: task.id, tags: task.tags ?? [], seeds, sound: problems.length === 0, runs, phrasing, problems };
}

/**
 * A wrong trajectory played as if it were the task: the same user message and
 * parameters (its own are drawn after the task's from the same substream, so
 * the task's values do not move), with its own solution.
 */
export function wrongTask(task: Task, wrong: WrongTrajectory): Task {
  return { ...task, params: { ...task.params, ...wrong.params }, solution: wrong.solution };
}

export function label(run: Pick<TrajectoryRun, 'kind' | 'id'>): string {
  if (run.kind === 'wrong') return `wrong trajectory "${run.id}"`;
  return run.id === undefined ? run.kind : `${run.kind} (${run.id})`;
}

const scripted: PolicyFactory = (request) => new ScriptedPolicy({ script: request.script, variant: 'clean', random: request.random });
const batched: PolicyFactory = (request) => new ScriptedPolicy({ script: request.script, variant: 'batch_reads', random: request.random });

async function play(kind: TrajectoryKind, id: string | undefined, spec: EpisodeSpec, policyFor: PolicyFactory, expected: 'pass' | 'fail'): Promise<TrajectoryRun> {
  const base = { kind, ...(id === undefined ? {} : { id }), seed: spec.seed, expected };
  let record: EpisodeRecord;
  try {
    record = await produceEpisode(spec, policyFor, { producedAt: spec.lane.document.produced_at });
  } catch (error) {
    return { ...base, failed: [], unsupported_claims: 0, outcome: 'error', sound: false, problem: `could not be played: ${errorMessage(error)}` };
  }
  const failed = record.result.predicates.filter((verdict) => !verdict.passed);
  const run = { ...base, failed: failed.map((verdict) => verdict.id), unsupported_claims: record.result.evidence.unsupported, outcome: record.result.outcome };
  if (expected === 'pass') {
    if (failed.length > 0) {
      const reasons = failed.map((verdict) => `${verdict.id} (${verdict.detail ?? 'failed'})`).join('; ');
      return { ...run, sound: false, problem: `fails ${reasons}; outcome ${record.result.outcome}` };
    }
    if (record.result.evidence.unsupported > 0) {
      const claim = record.result.evidence.claims.find((entry) => !entry.supported)!;
      return { ...run, sound: false, problem: `answers with a claim no call backs: "${claim.sentence}" (${claim.tool})` };
    }
    return { ...run, sound: true };
  }
  if (failed.length === 0) {
    const caught = record.result.evidence.unsupported > 0 ? ' (only the claims check caught it)' : '';
    return { ...run, sound: false, problem: `passes every predicate${caught}: the hidden checks do not see this mistake` };
  }
  return { ...run, sound: true };
}
