// Owns a model served by Ollama as a ChatModel, in its two ways of being
// asked: native, through /api/chat with the tools, reading message.tool_calls
// (several in a turn kept in order, whether a frame brings one or all); and
// raw, the prompt rendered by the family codec and asked through
// /api/generate with raw:true, the text handed back for the codec to read.
// Each turn's requests live as ollama-turn.ts says. It also owns how a record
// names the model, for every part it plays: the name it was asked by, a
// short version and the full digest, what /api/tags and /api/show said of
// it, how it was run, and the Ollama version.

import type { Ollama } from 'ollama';
import { FactoryError } from '../../core/errors.js';
import type { JsonObject } from '../../core/json-value.js';
import { modelActor, type ActorDetails, type Actor, type ChatModel, type ChatRequest, type ChatTurn, type ChatUsage, type ModelMode, type Sampling } from '../chat-model.js';
import type { ModelCodec } from '../codecs/model-codec.js';
import type { ToolCallRequest } from '../model-action.js';
import { parseArguments, toOllamaMessage, toOllamaTool } from '../message-translation.js';
import type { ModelInfo } from './ollama-inspection.js';
import { runModelTurn } from './ollama-turn.js';
import { shortPin } from '../model-pin.js';

export const OLLAMA_MODES: readonly ModelMode[] = ['native', 'raw'];

/** The sampling as Ollama's options name it. */
function ollamaOptions(sampling: Sampling): { seed: number; temperature: number; num_predict: number } {
  return { seed: sampling.seed, temperature: sampling.temperature, num_predict: sampling.maxTokens };
}

/** Ollama's final frame counts the tokens. */
function usageOf(frame: { prompt_eval_count?: number; eval_count?: number } | undefined): ChatUsage | null {
  if (frame?.prompt_eval_count === undefined && frame?.eval_count === undefined) return null;
  return { prompt_tokens: frame.prompt_eval_count ?? 0, completion_tokens: frame.eval_count ?? 0 };
}

export class OllamaChatModel implements ChatModel {
  readonly spec: string;
  readonly family: string | null;
  readonly pin: string;
  readonly modes = OLLAMA_MODES;

  constructor(
    readonly info: ModelInfo,
    /** How long the server may stay silent on one request, in milliseconds; never part of the record. */
    readonly timeoutMs: number,
  ) {
    this.spec = `ollama:${info.model}`;
    this.family = info.family;
    this.pin = info.digest;
  }

  actor(role: string, details: ActorDetails): Actor & JsonObject {
    const { info } = this;
    return modelActor(
      role,
      { name: info.model, version: shortPin(info.digest), provider: 'ollama', digest: info.digest },
      { family: info.family, parameter_size: info.parameter_size, quantization: info.quantization },
      details,
      { options: ollamaOptions(details.sampling) },
      { ollama_version: info.ollama_version },
    );
  }

  describe(): string {
    const { info } = this;
    return `${info.model} (${shortPin(info.digest)}, ${info.family ?? 'unknown family'}) at ${info.host}, Ollama ${info.ollama_version}`;
  }

  failureHint(): string {
    return `check the Ollama server at ${this.info.host} (\`ollama ps\`, its log; raise --model-timeout if it is only slow)`;
  }

  inMode(mode: ModelMode, codec: ModelCodec): ChatModel {
    if (mode === 'raw') return new OllamaRawChatModel(this, codec);
    if (!this.info.tools_capable) {
      throw new FactoryError('model_unavailable', `${this.info.model} does not declare tool support (its /api/show capabilities lack "tools"), so native tool calling cannot work`, {
        fix: 'run it with --mode raw, which renders the prompt with the family codec',
      });
    }
    return this;
  }

  async chat(request: ChatRequest): Promise<ChatTurn> {
    const { info } = this;
    return runModelTurn({ host: info.host, endpoint: '/api/chat', timeoutMs: this.timeoutMs, signal: request.signal }, async (client: Ollama) => {
      const stream = await client.chat({
        model: info.model,
        messages: request.messages.map(toOllamaMessage),
        ...(request.tools ? { tools: request.tools.map(toOllamaTool) } : {}),
        options: ollamaOptions(request.sampling),
        stream: true,
      });
      let text = '';
      const toolCalls: ToolCallRequest[] = [];
      let last;
      for await (const part of stream) {
        text += part.message?.content ?? '';
        for (const call of part.message?.tool_calls ?? []) toolCalls.push({ name: call.function.name, arguments: parseArguments(call.function.arguments) });
        last = part;
      }
      return { text, toolCalls, usage: usageOf(last) };
    });
  }
}

/** The same model asked raw: the codec renders the whole prompt, and stops where the family ends a turn. */
class OllamaRawChatModel implements ChatModel {
  readonly spec: string;
  readonly family: string | null;
  readonly pin: string;
  readonly modes = OLLAMA_MODES;

  constructor(
    private readonly native: OllamaChatModel,
    private readonly codec: ModelCodec,
  ) {
    this.spec = native.spec;
    this.family = native.family;
    this.pin = native.pin;
  }

  actor(role: string, details: ActorDetails): Actor & JsonObject {
    return this.native.actor(role, details);
  }

  describe(): string {
    return this.native.describe();
  }

  failureHint(): string {
    return this.native.failureHint();
  }

  inMode(mode: ModelMode, codec: ModelCodec): ChatModel {
    return this.native.inMode(mode, codec);
  }

  async chat(request: ChatRequest): Promise<ChatTurn> {
    const { info, timeoutMs } = this.native;
    const { codec } = this;
    return runModelTurn({ host: info.host, endpoint: '/api/generate', timeoutMs, signal: request.signal }, async (client: Ollama) => {
      const stream = await client.generate({
        model: info.model,
        prompt: codec.render(request.messages, request.tools ?? []),
        raw: true,
        options: { ...ollamaOptions(request.sampling), stop: [...codec.stop] },
        stream: true,
      });
      let text = '';
      let last;
      for await (const part of stream) {
        text += part.response ?? '';
        last = part;
      }
      return { text, toolCalls: [], usage: usageOf(last), raw: text };
    });
  }
}
