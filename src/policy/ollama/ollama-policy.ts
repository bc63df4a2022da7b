// Owns the model policy: a local model served by Ollama takes the turns.
// Native mode asks /api/chat with the tools and reads message.tool_calls,
// falling back to the family codec when a small model writes the call as text
// the server's parser missed; raw mode renders the prompt with the codec and
// asks /api/generate with raw:true. Either way one turn becomes exactly one
// action. The seed, temperature and output-token cap of every turn come from
// the lane and the episode, and are pinned in the record's actor.

import { Ollama, type Message as OllamaMessage, type Tool as OllamaTool } from 'ollama';
import type { Message, ToolDescriptor } from '../../core/conversation.js';
import { isJsonObject, type JsonObject } from '../../core/json-value.js';
import type { Random } from '../../core/random.js';
import type { ModelCodec } from '../codecs/model-codec.js';
import type { Action, Observation, Policy } from '../policy-contract.js';
import type { ModelInfo } from './ollama-model.js';

export type ModelMode = 'native' | 'raw';

export interface ModelSettings {
  mode: ModelMode;
  codec: ModelCodec;
  temperature: number;
  /** Output tokens per turn (Ollama's num_predict). */
  num_predict: number;
}

export interface OllamaPolicyOptions {
  info: ModelInfo;
  settings: ModelSettings;
  /** The policy's own substream: draws the model's sampling seed for this episode. */
  random: Random;
}

function toOllamaMessage(message: Message): OllamaMessage {
  switch (message.role) {
    case 'system':
    case 'user':
      return { role: message.role, content: message.content };
    case 'assistant':
      return message.tool_calls
        ? {
            role: 'assistant',
            content: message.content,
            tool_calls: message.tool_calls.map((call) => ({ function: { name: call.name, arguments: isJsonObject(call.arguments) ? call.arguments : {} } })),
          }
        : { role: 'assistant', content: message.content };
    case 'tool':
      return { role: 'tool', content: message.content, ...(message.name ? { tool_name: message.name } : {}) };
  }
}

function toOllamaTool(tool: ToolDescriptor): OllamaTool {
  return { type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.input_schema as OllamaTool['function']['parameters'] } };
}

function asArguments(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

/** Ollama's errors say what went wrong on the server; keep that and say which call it was. */
function describe(endpoint: string, error: unknown): Error {
  const shaped = error as { name?: string; status_code?: number; message?: string };
  if (shaped.name === 'AbortError') return error as Error;
  const status = shaped.status_code ? `HTTP ${shaped.status_code}: ` : '';
  return new Error(`ollama ${endpoint} failed: ${status}${shaped.message ?? String(error)}`);
}

export class OllamaPolicy implements Policy {
  readonly actor: JsonObject & { role: string; kind: string; name: string; version: string };
  private readonly client: Ollama;
  private readonly options: { seed: number; temperature: number; num_predict: number };

  constructor(private readonly config: OllamaPolicyOptions) {
    const { info, settings } = config;
    // One client per episode: aborting a turn must not abort another episode's.
    this.client = new Ollama({ host: info.host });
    this.options = { seed: config.random.int(0, 2 ** 31 - 1), temperature: settings.temperature, num_predict: settings.num_predict };
    this.actor = {
      role: 'policy',
      kind: 'model',
      name: info.model,
      version: info.digest.replace(/^sha256:/, '').slice(0, 12),
      provider: 'ollama',
      digest: info.digest,
      family: info.family,
      parameter_size: info.parameter_size,
      quantization: info.quantization,
      codec: settings.codec.name,
      mode: settings.mode,
      options: { ...this.options },
      ollama_version: info.ollama_version,
    };
  }

  async next(observation: Observation, signal: AbortSignal): Promise<Action> {
    return this.config.settings.mode === 'native' ? this.chat(observation, signal) : this.generate(observation, signal);
  }

  private async chat(observation: Observation, signal: AbortSignal): Promise<Action> {
    let stream;
    try {
      stream = await this.client.chat({
        model: this.config.info.model,
        messages: observation.messages.map(toOllamaMessage),
        tools: observation.tools.map(toOllamaTool),
        options: { ...this.options },
        stream: true,
      });
    } catch (error) {
      throw describe('/api/chat', error);
    }
    const abort = () => stream.abort();
    signal.addEventListener('abort', abort, { once: true });
    let content = '';
    const calls: { name: string; arguments: unknown }[] = [];
    try {
      for await (const part of stream) {
        content += part.message?.content ?? '';
        for (const call of part.message?.tool_calls ?? []) calls.push({ name: call.function.name, arguments: asArguments(call.function.arguments) });
      }
    } catch (error) {
      throw describe('/api/chat', error);
    } finally {
      signal.removeEventListener('abort', abort);
    }
    const [first, ...rest] = calls;
    if (first) {
      return { kind: 'tool_call', name: first.name, arguments: first.arguments, ...(content.trim() ? { text: content.trim() } : {}), ...(rest.length ? { ignored_calls: rest.length } : {}) };
    }
    // The server's template parser found no call; the family may still have written one as text.
    return this.config.settings.codec.parse(content);
  }

  private async generate(observation: Observation, signal: AbortSignal): Promise<Action> {
    const { codec } = this.config.settings;
    let stream;
    try {
      stream = await this.client.generate({
        model: this.config.info.model,
        prompt: codec.render(observation.messages, observation.tools),
        raw: true,
        options: { ...this.options, stop: [...codec.stop] },
        stream: true,
      });
    } catch (error) {
      throw describe('/api/generate', error);
    }
    const abort = () => stream.abort();
    signal.addEventListener('abort', abort, { once: true });
    let text = '';
    try {
      for await (const part of stream) text += part.response ?? '';
    } catch (error) {
      throw describe('/api/generate', error);
    } finally {
      signal.removeEventListener('abort', abort);
    }
    return codec.parse(text);
  }
}
