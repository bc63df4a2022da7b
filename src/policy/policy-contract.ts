// Owns the policy contract: given what a model would see (the committed
// messages and the tool catalog) produce exactly one action. A policy never
// receives world state, hidden predicates or anything else a model could not see.

import type { Message, ToolDescriptor } from '../core/conversation.js';
import type { JsonObject } from '../core/json-value.js';

export interface FinalText {
  kind: 'final_text';
  text: string;
}

export interface ToolCallAction {
  kind: 'tool_call';
  name: string;
  /** Unvalidated: the runner checks it against the tool's schema before anything runs. */
  arguments: unknown;
  /** Text the model wrote alongside the call, if any. */
  text?: string;
  /** Wait this long before the call (a retry's backoff); traced, never recorded. */
  backoff_ms?: number;
}

/** One call of a turn that makes several. */
export interface ToolCallRequest {
  name: string;
  /** Unvalidated, as for a single call. */
  arguments: unknown;
}

/**
 * Several tool calls in one assistant turn (parallel calls). The runner
 * validates each on its own, executes the valid ones in the order given and
 * answers every one with its own tool message, matched by id. A turn of one
 * call is a ToolCallAction; policies never send a one-element list.
 */
export interface ToolCallsAction {
  kind: 'tool_calls';
  calls: ToolCallRequest[];
  text?: string;
  backoff_ms?: number;
}

export interface MalformedToolCall {
  kind: 'malformed_tool_call';
  /** The model's raw output. */
  raw: string;
  reason: string;
}

export type Action = FinalText | ToolCallAction | ToolCallsAction | MalformedToolCall;

export interface Observation {
  readonly messages: readonly Message[];
  readonly tools: readonly ToolDescriptor[];
}

/** Who acted, pinned into every record's provenance. */
export interface Actor {
  role: string;
  kind: string;
  name: string;
  version: string;
  [detail: string]: unknown;
}

/**
 * The policy could not act because what it runs on failed: a model server
 * answered with an HTTP error, dropped the connection, stayed silent past its
 * timeout, or sent something that is not its protocol. That is not the agent's
 * behaviour, so it never becomes a record: the runner stops the episode and
 * the factory keeps it apart from the training records. A model that answers
 * well-formed HTTP with unusable text is behaviour (MalformedToolCall), not this.
 */
export class InfrastructureError extends Error {
  override readonly name = 'InfrastructureError';
}

export interface Policy {
  readonly actor: Actor & JsonObject;
  next(observation: Observation, signal: AbortSignal): Promise<Action>;
}
