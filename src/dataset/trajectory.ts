// Owns the normalised trajectory of a record: the conversation as a sequence
// of turns (who spoke, what was said, which tools were called with which
// arguments in canonical form, what came back), without ids or provenance.
// Two records with the same trajectory are the same episode, whatever their
// seeds or record ids; dedup and stats hash it.

import { canonicalJson } from '../core/canonical-json.js';
import { hashCanonical } from '../core/hashing.js';
import type { EpisodeRecord, RecordMessage } from '../records/episode-record.js';

export interface TurnCall {
  tool: string;
  arguments: string;
}

/**
 * An assistant turn with one call keeps the shape it had before turns could
 * make several (`call`), so the hashes of existing records do not move; a turn
 * with several lists them in the order given (`calls`). Tool turns carry no
 * call id: the runner answers a turn's calls in that same order, so position
 * already says which call a result answers.
 */
export type Turn =
  | { role: 'system' | 'user'; text: string }
  | { role: 'assistant'; text: string; call?: TurnCall; calls?: TurnCall[]; malformed?: string }
  | { role: 'tool'; ok: boolean; kind: string | null; text: string };

function normalisedArguments(encoded: string): string {
  try {
    return canonicalJson(JSON.parse(encoded));
  } catch {
    return encoded;
  }
}

export function turnOf(message: RecordMessage): Turn {
  switch (message.role) {
    case 'system':
    case 'user':
      return { role: message.role, text: message.content };
    case 'assistant': {
      const calls = (message.tool_calls ?? []).map((call): TurnCall => ({ tool: call.name, arguments: normalisedArguments(call.arguments) }));
      return {
        role: 'assistant',
        text: message.content,
        ...(calls.length === 1 ? { call: calls[0]! } : calls.length > 1 ? { calls } : {}),
        ...(message.malformed_tool_call ? { malformed: message.malformed_tool_call.reason } : {}),
      };
    }
    case 'tool':
      return { role: 'tool', ok: message.tool_result.ok, kind: message.tool_result.kind ?? null, text: message.content };
  }
}

/** Every call of an assistant turn, whichever shape it has; none for other turns. */
export function turnCalls(turn: Turn): TurnCall[] {
  if (turn.role !== 'assistant') return [];
  return turn.calls ?? (turn.call ? [turn.call] : []);
}

export function trajectory(record: EpisodeRecord): Turn[] {
  return record.messages.map(turnOf);
}

/** sha256 of the canonical trajectory: equal for records that are the same episode. */
export function trajectoryHash(record: EpisodeRecord): string {
  return hashCanonical(trajectory(record));
}

/** The final answer, or null when the episode ended without one. */
export function finalText(record: EpisodeRecord): string | null {
  const last = record.messages[record.messages.length - 1];
  return last?.role === 'assistant' && !last.tool_calls && !last.malformed_tool_call ? last.content : null;
}
