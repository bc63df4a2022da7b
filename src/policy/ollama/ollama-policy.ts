// Owns the model policy: a local model served by Ollama takes the turns.
// Native mode asks /api/chat with the tools and reads message.tool_calls,
// falling back to the family codec when a small model writes the call as text
// the server's parser missed; raw mode renders the prompt with the codec and
// asks /api/generate with raw:true. Either way one turn becomes exactly one
// action, several calls in a turn being one tool_calls action. The seed,
// temperature and output-token cap of every turn come from the lane and the
// episode, and are pinned in the record's actor. Each turn's
// requests live as model-turn.ts says: a failure of the server rather than of
// the model is thrown as an InfrastructureError, never returned as an action.

import { Ollama, type Message as OllamaMessage, type Tool as OllamaTool } from 'ollama';
import type { Message, ToolDescriptor } from '../../core/conversation.js';
import { isJsonObject, type JsonObject } from '../../core/json-value.js';
import type { Random } from '../../core/random.js';
import { callsAction, type ModelCodec } from '../codecs/model-codec.js';
import type { Action, Actor, Observation, Policy, ToolCallRequest } from '../policy-contract.js';
import { modelActor, samplingOptions, type SamplingOptions } from './model-actor.js';
import { DEFAULT_MODEL_TIMEOUT_MS } from './model-server-fetch.js';
import { runModelTurn } from './model-turn.js';
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
  /** How long the server may stay silent on one request, in milliseconds; never part of the record. */
  timeoutMs?: number;
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

export class OllamaPolicy implements Policy {
  readonly actor: Actor & JsonObject;
  private readonly options: SamplingOptions;
  private readonly timeoutMs: number;

  constructor(private readonly config: OllamaPolicyOptions) {
    const { info, settings } = config;
    this.timeoutMs = config.timeoutMs ?? DEFAULT_MODEL_TIMEOUT_MS;
    this.options = samplingOptions(config.random, settings);
    this.actor = modelActor('policy', info, { codec: settings.codec.name, mode: settings.mode, options: { ...this.options } });
  }

  async next(observation: Observation, signal: AbortSignal): Promise<Action> {
    const endpoint = this.config.settings.mode === 'native' ? '/api/chat' : '/api/generate';
    const answer = await runModelTurn({ host: this.config.info.host, endpoint, timeoutMs: this.timeoutMs, signal }, (client) =>
      endpoint === '/api/chat' ? this.chat(client, observation) : this.generate(client, observation),
    );
    // Whatever the model wrote is its behaviour: text the codec cannot read becomes a MalformedToolCall, never a failure.
    return typeof answer === 'string' ? this.config.settings.codec.parse(answer) : answer;
  }

  /** The native calls as an action (several calls in a turn make one tool_calls action), or the text for the codec when the server's parser found none. */
  private async chat(client: Ollama, observation: Observation): Promise<Action | string> {
    const stream = await client.chat({
      model: this.config.info.model,
      messages: observation.messages.map(toOllamaMessage),
      tools: observation.tools.map(toOllamaTool),
      options: { ...this.options },
      stream: true,
    });
    let content = '';
    // The server may send a turn's calls in one frame or one a frame; either way they are kept in order.
    const calls: ToolCallRequest[] = [];
    for await (const part of stream) {
      content += part.message?.content ?? '';
      for (const call of part.message?.tool_calls ?? []) calls.push({ name: call.function.name, arguments: asArguments(call.function.arguments) });
    }
    if (calls.length > 0) return callsAction(calls, content.trim());
    // The server's template parser found no call; the family may still have written one as text.
    return content;
  }

  private async generate(client: Ollama, observation: Observation): Promise<string> {
    const { codec } = this.config.settings;
    const stream = await client.generate({
      model: this.config.info.model,
      prompt: codec.render(observation.messages, observation.tools),
      raw: true,
      options: { ...this.options, stop: [...codec.stop] },
      stream: true,
    });
    let text = '';
    for await (const part of stream) text += part.response ?? '';
    return text;
  }
}
