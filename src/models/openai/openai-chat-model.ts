// Owns a model served through an OpenAI-compatible API (vLLM, SGLang,
// llama.cpp's server, Ollama's /v1) as a ChatModel: each turn is one chat
// completion (chat-completion.ts), streamed by default or whole, its native
// tool_calls read in order. It also owns how a record names the model, for
// every part it plays: the served id, what the server said of the weights it
// loaded, the pin (a digest, or the revision its weights name), how it was
// run, and the server's version. The base URL and the API key are never part
// of it: a port is not the model, and a key is a secret.

import type { JsonObject } from '../../core/json-value.js';
import { modelActor, type ActorDetails, type Actor, type ChatModel, type ChatRequest, type ChatTurn, type ModelMode } from '../chat-model.js';
import { toOpenAIMessages, toOpenAITool, parseArguments } from '../message-translation.js';
import { pinnedRevision, shortPin } from '../model-pin.js';
import { chatCompletion, type OpenAIServer } from './chat-completion.js';
import type { OpenAIModelInfo } from './openai-inspection.js';

export const OPENAI_MODES: readonly ModelMode[] = ['native'];

/** How a turn's requests are made: never part of the record. */
interface OpenAIConnection {
  server: OpenAIServer;
  /** How long the server may stay silent on one request, in milliseconds. */
  timeoutMs: number;
  /** Retries after a 429 or a 5xx. */
  retries?: number;
  /** Streamed answers (SSE) or one JSON body per turn. */
  stream: boolean;
}

/** An OpenAI-compatible server names no family: the served id usually does (Qwen/Qwen2.5-1.5B-Instruct, meta-llama/Llama-3.2-3B, mistral-7b.gguf). */
function familyFromModelId(id: string): string | null {
  const name = id.toLowerCase();
  if (/qwen/.test(name)) return 'qwen2';
  if (/llama-?3|llama3/.test(name)) return 'llama';
  if (/mi[sx]tral/.test(name)) return 'mistral';
  return null;
}

export class OpenAIChatModel implements ChatModel {
  readonly spec: string;
  readonly family: string | null;
  readonly pin: string;
  readonly modes = OPENAI_MODES;

  constructor(
    readonly info: OpenAIModelInfo,
    /** The digest the server reported or the user supplied; null when the weights id names a revision. */
    readonly digest: string | null,
    readonly connection: OpenAIConnection,
  ) {
    this.spec = `openai:${info.model}`;
    this.family = familyFromModelId(info.model);
    this.pin = digest ?? pinnedRevision(info.weights) ?? '';
  }

  /** The version a record shows: the short pin, or `unpinned`. */
  private version(): string {
    return shortPin(this.pin) || 'unpinned';
  }

  actor(role: string, details: ActorDetails): Actor & JsonObject {
    const { info } = this;
    const { sampling } = details;
    return modelActor(
      role,
      { name: info.model, version: this.version(), provider: 'openai', digest: this.digest },
      { weights: info.weights, server: info.server, max_model_len: info.max_model_len, chat_template_sha256: info.chat_template_sha256 },
      details,
      { ...(details.namesTransport ? { transport: { stream: this.connection.stream } } : {}), options: { seed: sampling.seed, temperature: sampling.temperature, max_tokens: sampling.maxTokens } },
      { server_version: info.server_version },
    );
  }

  describe(): string {
    const { info, connection } = this;
    const pin = shortPin(this.pin);
    const server = info.server === 'unknown' ? 'an OpenAI-compatible server' : `${info.server}${info.server_version ? ` ${info.server_version}` : ''}`;
    return `${info.model} (${pin}${info.weights ? `, weights ${info.weights}` : ''}) at ${connection.server.baseUrl}, ${server}${connection.server.apiKey ? ', with an API key' : ''}`;
  }

  failureHint(): string {
    const { baseUrl } = this.connection.server;
    return `check the server at ${baseUrl} (\`curl ${baseUrl}/models\`, its log; raise --model-timeout if it is only slow)`;
  }

  inMode(mode: ModelMode): ChatModel {
    // Selection refuses raw before the check, in the provider's words (modeRefusal); a caller that asks anyway has a bug.
    if (mode !== 'native') throw new Error(`${this.spec} runs in native mode only`);
    return this;
  }

  async chat(request: ChatRequest): Promise<ChatTurn> {
    const { connection } = this;
    const answer = await chatCompletion(
      connection.server,
      {
        model: this.info.model,
        messages: toOpenAIMessages(request.messages),
        ...(request.tools ? { tools: request.tools.map(toOpenAITool) } : {}),
        seed: request.sampling.seed,
        temperature: request.sampling.temperature,
        max_tokens: request.sampling.maxTokens,
        stream: connection.stream,
      },
      { timeoutMs: connection.timeoutMs, signal: request.signal, ...(connection.retries !== undefined ? { retries: connection.retries } : {}) },
    );
    return {
      text: answer.text,
      toolCalls: answer.toolCalls.map((call) => ({ name: call.name, arguments: parseArguments(call.arguments) })),
      usage: answer.usage ? { prompt_tokens: answer.usage.prompt_tokens, completion_tokens: answer.usage.completion_tokens } : null,
    };
  }
}
