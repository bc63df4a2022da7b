// Owns the in-memory shape of a lane file (see schemas/lane.v1.schema.json)
// and the defaults the factory applies where a lane is silent.

import type { JsonObject, JsonValue } from '../core/json-value.js';
import type { Limits } from '../runner/limits.js';
import type { Matcher, Where } from '../core/where-clause.js';
import type { FaultPlan } from '../world/faults/fault-plan.js';

export type { Matcher, Where };

export type ParamSpec =
  | { from: string; where?: Where }
  | { choice: JsonValue[] }
  | { token: { length: number; prefix?: string } };

export interface Expectation {
  path: string;
  equals?: JsonValue;
  contains?: JsonValue;
}

export interface ReadStep {
  call: string;
  arguments: JsonObject;
  expect?: Expectation;
}

/** One call of a parallel group: several independent calls the batch_reads variant makes in one turn. */
export interface ParallelCall {
  call: string;
  arguments: JsonObject;
  as?: string;
}

export type SolutionStep =
  | { call: string; arguments: JsonObject; as?: string; before?: ReadStep; after?: ReadStep & { expect: Expectation } }
  | { parallel: ParallelCall[] }
  /** Ask the user for a fact (the fact's id); the scripted user answers it. */
  | { ask: string }
  | { answer: string };

/**
 * A fact the task's user means, as the lane writes it ({{param}} templates).
 * A told fact is in the first message; a withheld one the user gives only
 * when the agent asks for it.
 */
export interface TaskFact {
  id: string;
  /** The text that gives the fact away, e.g. "#{{issue.number}}". */
  value: string;
  withheld?: boolean;
  /** Words any one of which, in a question, asks for this fact. */
  asked_by: string[];
  /** The scripted user's answer when asked; must contain `value`. */
  answer: string;
  /** How a scripted agent asks for it. */
  question: string;
}

export interface Query {
  path: string;
  where?: Where;
  field: string;
  snapshot?: 'initial' | 'final';
}

export interface Predicate {
  id?: string;
  description?: string;
  all?: Predicate[];
  any?: Predicate[];
  not?: Predicate;
  path?: string;
  equals?: JsonValue;
  contains?: JsonValue;
  exists?: boolean;
  unchanged?: string;
  except?: string[];
  /** With `unchanged`: keys absent from the initial snapshot (records the episode created) may appear. */
  allow_added?: boolean;
  /** With `unchanged` on a list or map: items matching this clause (before or after) may change, appear or go. */
  except_where?: Where;
  count?: { path: string; where?: Where; snapshot?: 'initial' | 'final' };
  calls?: { tool: string; ok?: boolean };
  /** Every call of `tool` comes after a user turn that gave the fact (a write made on a guess fails). */
  informed?: { fact: string; before: string };
  /** Count of the agent's questions (text turns with a question mark), only those asking for `fact` if given; bounded by min/max. */
  questions?: { fact?: string };
  min?: number;
  max?: number;
  answer?: { contains?: string | string[]; contains_all?: Query; contains_none?: Query; matches?: string };
}

/**
 * A phrasing grammar (see phrasing-grammar.ts): rule name to its alternatives,
 * text with {{param}} templates and <rule> references. A task's starts at `say`.
 */
export type PhrasingRules = Record<string, string | string[]>;

/** A task's user message: one sentence, or a grammar an episode draws one phrasing of. */
export type UserText = string | PhrasingRules;

export interface Task {
  id: string;
  title: string;
  tags?: string[];
  params?: Record<string, ParamSpec>;
  user: UserText;
  /** What the user means, told or withheld; a task with facts runs with a user simulator. */
  facts?: TaskFact[];
  /** What the user wants, in a sentence, for a model-backed user simulator (the title when absent). */
  goal?: string;
  solution: SolutionStep[];
  /** How the guess_then_corrected variant acts instead of its first question: a write on a guess, then an answer. */
  guess?: SolutionStep[];
  predicates: (Predicate & { id: string })[];
  /** Trajectories the predicates must fail (checked by `lanes check`). */
  wrong?: WrongTrajectory[];
  /** How `lanes synthesize` made the task; absent on a hand-written one. */
  synthesized?: TaskSynthesis;
}

/** A synthesised task's provenance: the sampler or writer model, and the draw that made it. */
export interface TaskSynthesis {
  by: string;
  sampler?: string;
  writer_digest?: string;
  draw: number;
  kind: 'write' | 'read';
  tools?: string[];
}

/** A plausible wrong way to do a task: its own solution, and values drawn after the task's own. */
export interface WrongTrajectory {
  id: string;
  description: string;
  params?: Record<string, ParamSpec>;
  solution: SolutionStep[];
}

export interface LaneDocument {
  $schema?: string;
  format: 'episode-factory.lane.v1';
  name: string;
  description: string;
  produced_at: string;
  world: { name: string; config?: JsonObject };
  policy: { kind: 'scripted'; variants?: Record<string, number>; draw?: 'one' | 'each' };
  model?: { temperature?: number; max_output_tokens?: number; mode?: 'native' | 'raw'; codec?: 'hermes' | 'llama3' | 'mistral' };
  seeds: string;
  limits?: Partial<Limits>;
  faults?: FaultPlan;
  system_prompt: string;
  /** Phrasing rules every task's grammar may use (greetings, closings); a task's own rule of the same name wins. */
  phrasing?: PhrasingRules;
  tasks: Task[];
  /** A rewrites cache file next to the lane (see phrasing-rewrites.ts). */
  rewrites?: string;
  dataset_card?: LaneCardFields;
}

/** What the dataset card says about datasets drawn from a lane; it changes no episode, so it is not part of the lane's hash. */
export interface LaneCardFields {
  license: string;
  license_name?: string;
  license_link?: string;
  task_categories?: string[];
}

/** A lane as loaded: the document plus what the factory derives from it. */
export interface Lane {
  document: LaneDocument;
  name: string;
  /** Where it was read from. */
  path: string;
  /** sha256 of the canonical JSON of the document without dataset_card: whitespace and card edits do not change it. */
  sha256: string;
  limits: Limits;
  faults: FaultPlan;
  variants: Record<string, number>;
  seeds: SeedRange;
  /** The rewrites cache the lane names, already applied to `document`'s task messages. */
  rewrites?: RewritesCache;
}

export const REWRITES_FORMAT = 'episode-factory.rewrites.v1';

/** A lane's rewrites cache (phrasing-rewrites.ts): phrasings a writer model added to its tasks' requests ahead of a run. */
export interface RewritesCache {
  format: typeof REWRITES_FORMAT;
  lane: string;
  writer: JsonObject & { role: 'writer'; kind: string; name: string; version: string };
  tasks: Record<string, string[]>;
}

export interface SeedRange {
  from: number;
  to: number;
}

export function findTask(lane: Lane, taskId: string): Task | undefined {
  return lane.document.tasks.find((task) => task.id === taskId);
}
