// Owns the language of a task's solution script, shared by the lane that
// declares it and the scripted policy that plays it: the steps (a call, a
// parallel group, a question to the user, an answer), the reads around a
// write, and the variants a script can be played in. It lives below both so
// that a lane never imports a policy and a policy never sees a lane, whose
// hidden predicates it must not reach.

import type { JsonObject } from '../core/json-value.js';
import type { ReadExpectation } from './read-expectation.js';

export interface ScriptRead {
  call: string;
  arguments: JsonObject;
  expect?: ReadExpectation;
}

export type ScriptStep =
  | { call: string; arguments: JsonObject; as?: string; before?: ScriptRead; after?: ScriptRead & { expect: ReadExpectation } }
  | { parallel: { call: string; arguments: JsonObject; as?: string }[] }
  /** A question to the user about a fact: `question` is the rendered text the agent says. */
  | { ask: string; question: string }
  | { answer: string };

export const SCRIPTED_VARIANTS = [
  'clean',
  'wrong_type_first',
  'repair_arguments',
  'retry_on_transient',
  'precondition_first',
  'verify_after_write',
  'give_up_on_fault',
  'batch_reads',
  'guess_then_corrected',
  'asks_too_often',
] as const;
export type ScriptedVariant = (typeof SCRIPTED_VARIANTS)[number];
