// Owns the per-phase profile of an episode (`npm run bench -- --profile-only`):
// module-level hooks the generate path calls at the edges of its phases (world
// init, connection, tool calls, replay, snapshot hashing, predicates, record
// validation, serialisation, writing). Off, each hook is one branch on a
// boolean and nothing else. On, time between hooks is charged to the innermost
// open phase (exclusive time), split by whether replay is open. This module
// never reads the clock: the bench passes one in, and the readings stay in
// this module's totals, which only the bench reads; no hook returns a value,
// so nothing the hooks see can reach a record or a trace. Phases must nest,
// so profile one episode at a time (concurrent episodes would interleave).

export const PROFILE_PHASES = [
  'world_init',
  'connection',
  'tool_calls',
  'snapshot',
  'snapshot_hash',
  'predicates',
  'record_assembly',
  'validation',
  'serialisation',
  'replay_compare',
  'writing',
  'columnar',
  'replay',
  'episode',
  'part',
  'other',
] as const;

export type ProfilePhase = (typeof PROFILE_PHASES)[number];

export interface PhaseProfile {
  /** Exclusive milliseconds per phase while generating (outside replay). */
  generate: Record<ProfilePhase, number>;
  /** Exclusive milliseconds per phase inside replay. */
  replay: Record<ProfilePhase, number>;
  /** Times a phase was exited, by phase (generation and replay together). */
  counts: Record<ProfilePhase, number>;
  /** Set when hooks did not nest (concurrent episodes): the split is then unreliable. */
  tangled: boolean;
}

const INDEX = new Map<ProfilePhase, number>(PROFILE_PHASES.map((phase, index) => [phase, index]));
const OTHER = INDEX.get('other')!;
const REPLAY = INDEX.get('replay')!;

let clock: (() => number) | undefined;
let last = 0;
let replayDepth = 0;
let tangled = false;
const stack: number[] = [];
const generateTotals = new Float64Array(PROFILE_PHASES.length);
const replayTotals = new Float64Array(PROFILE_PHASES.length);
const counts = new Float64Array(PROFILE_PHASES.length);

/** Turns the hooks on with the bench's clock, from zero. */
export function startProfile(now: () => number): void {
  clock = now;
  stack.length = 0;
  replayDepth = 0;
  tangled = false;
  generateTotals.fill(0);
  replayTotals.fill(0);
  counts.fill(0);
  last = now();
}

/** Turns the hooks off and returns what they measured. */
export function stopProfile(): PhaseProfile {
  if (clock) charge(clock());
  clock = undefined;
  const table = (totals: Float64Array) => Object.fromEntries(PROFILE_PHASES.map((phase, index) => [phase, totals[index]!])) as Record<ProfilePhase, number>;
  return { generate: table(generateTotals), replay: table(replayTotals), counts: table(counts), tangled: tangled || stack.length > 0 };
}

function charge(now: number): void {
  const phase = stack.length > 0 ? stack[stack.length - 1]! : OTHER;
  (replayDepth > 0 ? replayTotals : generateTotals)[phase]! += now - last;
  last = now;
}

export function enterPhase(phase: ProfilePhase): void {
  if (clock === undefined) return;
  charge(clock());
  const index = INDEX.get(phase)!;
  stack.push(index);
  if (index === REPLAY) replayDepth++;
}

export function exitPhase(phase: ProfilePhase): void {
  if (clock === undefined) return;
  charge(clock());
  const index = INDEX.get(phase)!;
  const top = stack.pop();
  if (top !== index) {
    tangled = true;
    if (top !== undefined) stack.push(top);
    return;
  }
  counts[index]!++;
  if (index === REPLAY) replayDepth--;
}

/** Runs `work` as `phase`. */
export function inPhase<T>(phase: ProfilePhase, work: () => T): T {
  if (clock === undefined) return work();
  enterPhase(phase);
  try {
    return work();
  } finally {
    exitPhase(phase);
  }
}

/** Awaits `work` as `phase`. */
export async function inPhaseAsync<T>(phase: ProfilePhase, work: () => Promise<T>): Promise<T> {
  if (clock === undefined) return work();
  enterPhase(phase);
  try {
    return await work();
  } finally {
    exitPhase(phase);
  }
}
