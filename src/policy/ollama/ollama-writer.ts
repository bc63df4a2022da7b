// Owns asking a local model to reword a task's request ahead of a run (the
// `writer` actor): the model gets the request's current phrasings and returns
// new ones, one a line, keeping every {{placeholder}} as written. Nothing it
// writes reaches an episode directly: the factory filters what it returns,
// caches the survivors next to the lane with this actor, and every run draws
// from that cache, so a run stays deterministic without the model.

import type { Ollama } from 'ollama';
import type { JsonObject } from '../../core/json-value.js';
import type { Actor } from '../policy-contract.js';
import { modelActor } from './model-actor.js';
import { DEFAULT_MODEL_TIMEOUT_MS } from './model-server-fetch.js';
import type { ModelInfo } from './ollama-model.js';
import { runModelTurn } from './model-turn.js';

export interface WriterSettings {
  temperature: number;
  num_predict: number;
  /** The sampling seed of every request, pinned in the actor. */
  seed: number;
}

export const WRITER_PROMPT =
  'You reword requests that a user sends to an assistant. Write each new version on its own line, with nothing else: ' +
  'no numbering, no quotes, no commentary. Keep the meaning and every fact. Copy every placeholder in double braces, ' +
  'like {{target.number}}, exactly as written, and add none. Vary the words, the tone and the order of the facts.';

/** The request the writer sends for one task: the phrasings it has, and how many new ones to write. */
export function writerRequest(phrasings: readonly string[], count: number): string {
  return `Write ${count} new versions of this request. Versions it already has:\n${phrasings.map((phrasing) => `- ${phrasing}`).join('\n')}`;
}

/** The model's lines, cleaned of list markers and quotes; empty lines dropped. */
export function writerLines(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim().replace(/^(?:[-*•]|\d+[.)])\s+/, '').replace(/^"(.*)"$/s, '$1').trim())
    .filter((line) => line.length > 0);
}

export class OllamaWriter {
  readonly actor: Actor & JsonObject;
  private readonly timeoutMs: number;

  constructor(
    private readonly info: ModelInfo,
    private readonly settings: WriterSettings,
    options: { timeoutMs?: number } = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_MODEL_TIMEOUT_MS;
    this.actor = modelActor('writer', info, { options: { seed: settings.seed, temperature: settings.temperature, num_predict: settings.num_predict } });
  }

  /** New phrasings of one request, as the model wrote them (unfiltered). */
  async reword(phrasings: readonly string[], count: number, signal: AbortSignal = new AbortController().signal): Promise<string[]> {
    const text = await runModelTurn({ host: this.info.host, endpoint: '/api/chat', timeoutMs: this.timeoutMs, signal }, (client) => this.chat(client, phrasings, count));
    return writerLines(text);
  }

  private async chat(client: Ollama, phrasings: readonly string[], count: number): Promise<string> {
    const stream = await client.chat({
      model: this.info.model,
      messages: [
        { role: 'system', content: WRITER_PROMPT },
        { role: 'user', content: writerRequest(phrasings, count) },
      ],
      options: { seed: this.settings.seed, temperature: this.settings.temperature, num_predict: this.settings.num_predict },
      stream: true,
    });
    let text = '';
    for await (const part of stream) text += part.message?.content ?? '';
    return text;
  }
}
