// Owns checking the final answer's claims against what happened: every
// sentence that claims a tool's effect ("I closed the issue", per the world's
// own claim patterns) needs a call of that tool that reached it and may have
// acted: one that succeeded, or whose answer was lost on the way (a timeout, a
// dropped connection, an invalid or oversized result). A claim without one is
// recorded as unsupported, and the task is then not completed, whatever the
// text says.

import type { Message } from '../core/conversation.js';
import type { ToolSpec } from '../world/world-contract.js';

export interface Claim {
  tool: string;
  sentence: string;
  supported: boolean;
}

export interface Evidence {
  claims: Claim[];
  unsupported: number;
}

/** Sentences of an answer: split after . ! ? and at line breaks. */
export function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((sentence) => sentence.trim())
    .filter(Boolean);
}

/** Outcomes where the call reached the tool but its answer did not come back whole. */
const MAY_HAVE_ACTED: ReadonlySet<string> = new Set(['timeout', 'transport_error', 'invalid_result', 'result_too_large']);

const compiled = new Map<string, RegExp>();
function pattern(source: string): RegExp {
  let regex = compiled.get(source);
  if (!regex) compiled.set(source, (regex = new RegExp(source, 'i')));
  return regex;
}

export function checkClaims(
  answer: string | null,
  tools: readonly ToolSpec[],
  messages: readonly Message[],
  aliases: ReadonlyMap<string, string> = new Map(),
): Evidence {
  if (answer === null) return { claims: [], unsupported: 0 };
  const acted = new Set(
    messages
      .filter((message) => message.role === 'tool' && message.name !== null && (message.tool_result.ok || MAY_HAVE_ACTED.has(message.tool_result.kind ?? '')))
      .map((message) => (message.role === 'tool' ? aliases.get(message.name!) ?? message.name! : '')),
  );
  const claims: Claim[] = [];
  for (const sentence of sentences(answer)) {
    for (const tool of tools) {
      if (tool.claims?.some((source) => pattern(source).test(sentence))) {
        claims.push({ tool: tool.name, sentence, supported: acted.has(tool.name) });
      }
    }
  }
  return { claims, unsupported: claims.filter((claim) => !claim.supported).length };
}
