// Owns the replay policy: it re-issues, in order, exactly the actions a record
// says the original policy took, so the episode can be rebuilt on a fresh world
// without the original policy (or model) being present.

import { copyPlain } from '../core/json-copy.js';
import type { JsonObject } from '../core/json-value.js';
import type { Action, Policy } from '../policy/policy-contract.js';
import type { RecordMessage } from '../records/episode-record.js';

export class ReplayExhausted extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReplayExhausted';
  }
}

export const REPLAY_EXHAUSTED = 'replay ran out of recorded actions';

/** The actions recorded in a record's assistant messages; throws when stored arguments are not JSON. */
export function recordedActions(messages: readonly RecordMessage[]): Action[] {
  const actions: Action[] = [];
  for (const [index, message] of messages.entries()) {
    if (message.role !== 'assistant') continue;
    const calls = message.tool_calls ?? [];
    if (calls.length > 0) {
      const requests = calls.map((call, position) => {
        try {
          return { name: call.name, arguments: JSON.parse(call.arguments) as unknown };
        } catch {
          throw new Error(`/messages/${index}/tool_calls/${position}/arguments is not JSON-encoded arguments`);
        }
      });
      const text = message.content ? { text: message.content } : {};
      actions.push(requests.length === 1 ? { kind: 'tool_call', ...requests[0]!, ...text } : { kind: 'tool_calls', calls: requests, ...text });
    } else if (message.malformed_tool_call) {
      actions.push({ kind: 'malformed_tool_call', raw: message.content, reason: message.malformed_tool_call.reason });
    } else {
      actions.push({ kind: 'final_text', text: message.content });
    }
  }
  return actions;
}

export class ReplayPolicy implements Policy {
  private index = 0;

  /**
   * @param actor the original policy's actor: the replay stands in for it.
   * @param exhaustedMessage what to throw when the record has no more actions,
   *   which reproduces an original that ended with a policy error.
   */
  constructor(
    private readonly actions: readonly Action[],
    readonly actor: JsonObject & { role: string; kind: string; name: string; version: string },
    private readonly exhaustedMessage: string = REPLAY_EXHAUSTED,
  ) {}

  async next(): Promise<Action> {
    const action = this.actions[this.index++];
    if (!action) throw new ReplayExhausted(this.exhaustedMessage);
    return copyPlain(action);
  }
}
