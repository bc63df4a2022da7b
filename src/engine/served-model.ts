// Owns what both wire protocols say about the one model an engine serves: its
// name (Ollama-style `name:tag`, matched as Ollama matches: a name without a
// tag means `latest`), its codec (chosen from the GGUF architecture, as the
// factory chooses one from Ollama's family), the details /api/tags and
// /api/show report, and a chat turn run whole: render, complete, read the
// calls, streaming text as it comes until a call may be starting.

import { sameModel } from '../models/model-name.js';
import { codecForFamily } from '../models/codecs/codec-registry.js';
import type { ModelCodec } from '../models/codecs/model-codec.js';
import type { ToolCallRequest } from '../models/model-action.js';
import { callStart, messagesOf, readTurn, toolsOf } from './chat-translation.js';
import type { Completion, GgufModel } from './gguf-model.js';
import { FactoryError } from '../core/errors.js';

/** What each codec's calls begin with: streamed text is held from there until the turn can be read whole. */
const CALL_OPENINGS: Record<string, readonly string[]> = {
  hermes: ['<tool_call>'],
  mistral: ['[TOOL_CALLS]'],
  // Llama 3.1 often writes a call as bare JSON.
  llama3: ['<|python_tag|>', '{'],
};

export interface SamplingRequest {
  stop?: readonly string[];
  maxTokens?: number;
  temperature?: number;
  seed?: number;
}

/** Output tokens a turn may take when the request does not say. */
export const DEFAULT_MAX_TOKENS = 1024;

export interface ChatTurn {
  completion: Completion;
  content: string;
  calls: ToolCallRequest[];
}

export class ServedModel {
  readonly codec: ModelCodec;

  constructor(
    readonly model: GgufModel,
    /** `name:tag`. */
    readonly name: string,
    /** The engine's version string, answered at /api/version. */
    readonly version: string,
    /** When the file was last written, ISO 8601: Ollama's modified_at. */
    readonly modifiedAt: string,
  ) {
    const codec = codecForFamily(model.description.architecture);
    if (!codec) {
      throw new FactoryError('model_unavailable', `no codec reads the tool syntax of the "${model.description.architecture}" architecture`, {
        fix: 'serve a qwen2, llama or mistral model (the families the factory has codecs for)',
      });
    }
    this.codec = codec;
  }

  matches(name: unknown): boolean {
    return typeof name === 'string' && name !== '' && sameModel(name, this.name);
  }

  get digest(): string {
    return this.model.description.sha256;
  }

  details() {
    const { architecture, parameter_size, quantization } = this.model.description;
    return { parent_model: '', format: 'gguf', family: architecture, families: [architecture], parameter_size, quantization_level: quantization };
  }

  /** A raw completion: the prompt exactly as given. */
  complete(prompt: string, sampling: SamplingRequest, signal: AbortSignal, onText?: (piece: string) => void): Promise<Completion> {
    return this.model.complete({
      prompt,
      stop: sampling.stop ?? [],
      maxTokens: sampling.maxTokens ?? DEFAULT_MAX_TOKENS,
      temperature: sampling.temperature ?? 0,
      ...(sampling.seed !== undefined ? { seed: sampling.seed } : {}),
      signal,
      ...(onText ? { onText } : {}),
    });
  }

  /** The prompt the family's template makes of a conversation with no tools: Ollama's non-raw /api/generate. */
  templated(system: string | undefined, prompt: string): string {
    return this.codec.render([...(system ? [{ role: 'system' as const, content: system }] : []), { role: 'user', content: prompt }], []);
  }

  /**
   * One chat turn: the messages and tools rendered by the family's template,
   * completed, and read by its codec. `onText` gets the text as it comes,
   * except from where a call may begin (held, then read with the rest).
   */
  async chat(messages: unknown, tools: unknown, sampling: SamplingRequest, signal: AbortSignal, onText?: (piece: string) => void): Promise<ChatTurn> {
    const conversation = messagesOf(messages);
    const catalog = toolsOf(tools);
    const prompt = this.codec.render(conversation, catalog);
    const openings = catalog.length > 0 ? (CALL_OPENINGS[this.codec.name] ?? []) : [];
    let text = '';
    let sent = 0;
    let holding = false;
    const stream = (piece: string) => {
      text += piece;
      if (holding || !onText) return;
      const starts = openings.map((opening) => callStart(text, opening)).filter((at) => at >= 0);
      const until = starts.length > 0 ? Math.min(...starts) : text.length;
      if (starts.length > 0 && text.length - until >= Math.min(...openings.map((opening) => opening.length))) holding = true;
      if (until > sent) {
        onText(text.slice(sent, until));
        sent = until;
      }
    };
    const completion = await this.complete(prompt, { ...sampling, stop: [...this.codec.stop, ...(sampling.stop ?? [])] }, signal, stream);
    const turn = readTurn(this.codec, completion.text);
    if (turn.calls.length > 0) {
      // The words before the calls were streamed already (or are sent now); the calls follow as calls.
      if (onText && turn.content.length > sent && completion.text.startsWith(turn.content)) onText(turn.content.slice(sent));
      return { completion, content: turn.content, calls: turn.calls };
    }
    if (onText && completion.text.length > sent) onText(completion.text.slice(sent));
    return { completion, content: completion.text, calls: [] };
  }
}
