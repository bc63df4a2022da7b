// Owns the replay user: it gives, in order, exactly the user replies a record
// holds, so a replay never asks a model again. It stands in for the original
// simulator under the original's actor; when the record runs out of replies
// the user is done, as the original was.

import type { JsonObject } from '../core/json-value.js';
import type { UserReply, UserSimulator } from '../policy/user-simulator.js';
import type { RecordMessage } from '../records/episode-record.js';

/** Everything the user said after the opening message: the simulator's replies. */
export function recordedUserReplies(messages: readonly RecordMessage[]): string[] {
  const opening = messages.findIndex((message) => message.role === 'user');
  return messages.filter((message, index) => message.role === 'user' && index > opening).map((message) => message.content);
}

export class ReplayUser implements UserSimulator {
  private index = 0;

  constructor(
    private readonly replies: readonly string[],
    readonly actor: JsonObject & { role: string; kind: string; name: string; version: string },
  ) {}

  async respond(): Promise<UserReply> {
    const text = this.replies[this.index++];
    return text === undefined ? { kind: 'done' } : { kind: 'reply', text };
  }
}
