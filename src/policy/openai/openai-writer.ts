// Owns asking a model on an OpenAI-compatible server to reword a task's
// request ahead of a run (the `writer` actor), with the same prompt, request
// and line cleaning as the Ollama writer (ollama-writer.ts owns those).
// Nothing it writes reaches an episode directly: the factory filters and
// caches it, as for the Ollama writer.

import type { JsonObject } from '../../core/json-value.js';
import { WRITER_PROMPT, writerLines, writerRequest, type WriterSettings } from '../ollama/ollama-writer.js';
import type { Actor } from '../policy-contract.js';
import { openAIActor, type OpenAIModel } from './openai-actor.js';
import { chatCompletion } from './openai-chat.js';
import type { OpenAIConnection } from './openai-policy.js';

export class OpenAIWriter {
  readonly actor: Actor & JsonObject;

  constructor(
    private readonly model: OpenAIModel,
    private readonly settings: WriterSettings,
    private readonly connection: OpenAIConnection,
    private readonly stream = true,
  ) {
    this.actor = openAIActor('writer', model, { options: { seed: settings.seed, temperature: settings.temperature, max_tokens: settings.num_predict } });
  }

  /** New phrasings of one request, as the model wrote them (unfiltered). */
  async reword(phrasings: readonly string[], count: number, signal: AbortSignal = new AbortController().signal): Promise<string[]> {
    const answer = await chatCompletion(
      this.connection.server,
      {
        model: this.model.info.model,
        messages: [
          { role: 'system', content: WRITER_PROMPT },
          { role: 'user', content: writerRequest(phrasings, count) },
        ],
        seed: this.settings.seed,
        temperature: this.settings.temperature,
        max_tokens: this.settings.num_predict,
        stream: this.stream,
      },
      { timeoutMs: this.connection.timeoutMs, signal, ...(this.connection.retries !== undefined ? { retries: this.connection.retries } : {}) },
    );
    return writerLines(answer.text);
  }
}
