// Owns the normalised trajectory of a record: the conversation as a sequence
// of turns (who spoke, what was said, which tool was called with which
// arguments in canonical form, what came back), without ids or provenance.
// Two records with the same trajectory are the same episode, whatever their
// seeds or record ids; dedup and stats hash it.

import { canonicalJson } from '../core/canonical-json.js';
import { hashCanonical } from '../core/hashing.js';
import type { EpisodeRecord, RecordMessage } from '../records/episode-record.js';

export type Turn =
  | { role: 'system' | 'user'; text: string }
  | { role: 'assistant'; text: string; call?: { tool: string; arguments: string }; malformed?: string }
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
      const call = message.tool_calls?.[0];
      return {
        role: 'assistant',
        text: message.content,
        ...(call ? { call: { tool: call.name, arguments: normalisedArguments(call.arguments) } } : {}),
        ...(message.malformed_tool_call ? { malformed: message.malformed_tool_call.reason } : {}),
      };
    }
    case 'tool':
      return { role: 'tool', ok: message.tool_result.ok, kind: message.tool_result.kind ?? null, text: message.content };
  }
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
