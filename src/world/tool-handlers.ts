// Owns the shape a world's behaviour takes: one handler per tool, each
// returning a success value or a failure message, and the dispatch from a
// tool name to its handler that every world's `call` is.

import type { JsonObject } from '../core/json-value.js';
import type { ToolOutcome, World } from './world-contract.js';

export type ToolHandler<State> = (state: State, args: JsonObject) => ToolOutcome;

export const fail = (message: string): ToolOutcome => ({ ok: false, message });
export const succeed = (value: JsonObject): ToolOutcome => ({ ok: true, value });

/** A world's `call`: the binding only ever asks for listed tools, so an unknown one is a bug, not a user error. */
export function dispatchTo<State>(world: string, handlers: Readonly<Record<string, ToolHandler<State>>>): World<State>['call'] {
  return (state, tool, args) => {
    const handler = handlers[tool];
    if (!handler) throw new Error(`${world} world has no tool "${tool}"`);
    return handler(state, args);
  };
}
