// Owns the policy contract: given what a model would see (the committed
// messages and the tool catalog) produce exactly one action. A policy never
// receives world state, hidden predicates or anything else a model could not see.

import type { Message, ToolDescriptor } from '../core/conversation.js';
import type { JsonObject } from '../core/json-value.js';
import type { Actor } from '../models/chat-model.js';
import type { Action } from '../models/model-action.js';

// The actions and the infrastructure failure are the chat models' too: one definition, in models/.
export { InfrastructureError, type Actor } from '../models/chat-model.js';
export type { Action, FinalText, MalformedToolCall, ToolCallAction, ToolCallRequest, ToolCallsAction } from '../models/model-action.js';

export interface Observation {
  readonly messages: readonly Message[];
  readonly tools: readonly ToolDescriptor[];
}

export interface Policy {
  readonly actor: Actor & JsonObject;
  next(observation: Observation, signal: AbortSignal): Promise<Action>;
}
