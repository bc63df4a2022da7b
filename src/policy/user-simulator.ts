// Owns the user simulator contract: the actor beside the policy that answers
// the agent between turns. When the agent's turn is text without a tool call,
// the runner asks the simulator whether the user replies (a `user` message,
// then the agent goes on) or is done (the episode ends with that text as the
// final answer). Like a policy it sees only the conversation and its brief:
// the task's goal and the facts the user means, never the predicates, the
// world state or the tools.

import type { Message } from '../core/conversation.js';
import type { JsonObject } from '../core/json-value.js';
import type { UserFact } from '../core/user-facts.js';
import type { Actor } from './policy-contract.js';

/** What the user knows: the goal in their own words, the first message they sent, and every fact they mean. */
export interface UserBrief {
  goal: string;
  opening: string;
  facts: readonly UserFact[];
}

export type UserReply = { kind: 'reply'; text: string } | { kind: 'done' };

export interface UserObservation {
  readonly messages: readonly Message[];
}

export interface UserSimulator {
  /** Pinned into the record's provenance with role "user". */
  readonly actor: Actor & JsonObject;
  respond(observation: UserObservation, signal: AbortSignal): Promise<UserReply>;
}
