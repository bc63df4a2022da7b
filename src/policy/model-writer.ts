// Owns asking a model to reword a task's request ahead of a run (the
// `writer` actor), written once against the ChatModel interface: the model
// gets the request's current phrasings and returns new ones, one a line,
// keeping every {{placeholder}} as written. Nothing it writes reaches an
// episode directly: `lanes rewrite` filters what it returns, caches the
// survivors next to the lane with this actor, and every run draws from that
// cache, so a run stays deterministic without the model.

import type { JsonObject } from '../core/json-value.js';
import type { ChatModel, Sampling } from '../models/chat-model.js';
import type { Actor } from './policy-contract.js';

/** The sampling of every request, pinned in the actor: the seed is fixed per lane, so asking again asks the same way. */
type WriterSettings = Sampling;

const WRITER_PROMPT =
  'You reword requests that a user sends to an assistant. Write each new version on its own line, with nothing else: ' +
  'no numbering, no quotes, no commentary. Keep the meaning and every fact. Copy every placeholder in double braces, ' +
  'like {{target.number}}, exactly as written, and add none. Vary the words, the tone and the order of the facts.';

/** The request the writer sends for one task: the phrasings it has, and how many new ones to write. */
function writerRequest(phrasings: readonly string[], count: number): string {
  return `Write ${count} new versions of this request. Versions it already has:\n${phrasings.map((phrasing) => `- ${phrasing}`).join('\n')}`;
}

/** The model's lines, cleaned of list markers and quotes; empty lines dropped. */
function writerLines(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim().replace(/^(?:[-*•]|\d+[.)])\s+/, '').replace(/^"(.*)"$/s, '$1').trim())
    .filter((line) => line.length > 0);
}

export class ModelWriter {
  readonly actor: Actor & JsonObject;

  constructor(
    private readonly model: ChatModel,
    private readonly settings: WriterSettings,
  ) {
    this.actor = model.actor('writer', { sampling: settings });
  }

  /** New phrasings of one request, as the model wrote them (unfiltered). */
  async reword(phrasings: readonly string[], count: number, signal: AbortSignal = new AbortController().signal): Promise<string[]> {
    const turn = await this.model.chat({
      messages: [
        { role: 'system', content: WRITER_PROMPT },
        { role: 'user', content: writerRequest(phrasings, count) },
      ],
      sampling: this.settings,
      signal,
    });
    return writerLines(turn.text);
  }
}
