// Owns the contract every tool world implements. A world is pure data plus
// deterministic functions: no clock, no Math.random, no disk, no network. It
// never knows about MCP, faults or policies; the server binding adapts it.

import type { JsonObject, JsonValue } from '../core/json-value.js';
import type { Random } from '../core/random.js';

export interface ToolSpec {
  name: string;
  description: string;
  inputSchema: JsonObject;
  outputSchema?: JsonObject;
  /** MCP tool annotations; `readOnlyHint` is how a fault layer tells reads from writes. */
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean };
  /**
   * Regular expressions (case-insensitive) for sentences of a final answer that
   * claim this tool's effect happened ("I closed the issue"). Verification
   * requires a successful call behind every such claim. Never shown to a policy.
   */
  claims?: string[];
}

export type ToolOutcome = { ok: true; value: JsonObject } | { ok: false; message: string };

export interface World<State = unknown> {
  readonly name: string;
  readonly version: string;
  readonly description: string;
  readonly tools: readonly ToolSpec[];
  /** Schema of the lane's `world.config` for this world. */
  readonly configSchema: JsonObject;
  /** Builds a fresh state; every random choice comes from `random`. */
  init(random: Random, config: JsonObject): State;
  /** Runs one tool on arguments that already passed the tool's input schema. May mutate `state`. */
  call(state: State, tool: string, args: JsonObject): ToolOutcome;
  /** The whole state as JSON: what hidden predicates judge and replay hashes. */
  snapshot(state: State): JsonValue;
}

/** A running world: its definition and one live state. */
export interface WorldInstance<State = unknown> {
  world: World<State>;
  state: State;
}
