// Owns Ollama's REST API as the engine answers it, with Ollama's shapes:
// /api/version, /api/tags, /api/ps, /api/show, /api/chat (tools; NDJSON
// streaming, calls in a frame of their own) and /api/generate (templated, or
// raw with the caller's stop strings), `{error}` bodies with Ollama's status
// codes, and an empty request loading the model (done_reason "load").

import type { Completion } from './gguf-model.js';
import { BadRequest } from './chat-translation.js';
import { callId, messagesOf, toolsOf } from './chat-translation.js';
import type { SamplingRequest, ServedModel } from './served-model.js';
import type { Exchange } from './http-exchange.js';

type Loose = Record<string, unknown>;
const isLoose = (value: unknown): value is Loose => typeof value === 'object' && value !== null && !Array.isArray(value);

function sampling(options: unknown): SamplingRequest {
  if (options === undefined || options === null) return {};
  if (!isLoose(options)) throw new BadRequest('options must be an object');
  const number = (key: string) => {
    const value = options[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'number' || !Number.isFinite(value)) throw new BadRequest(`options.${key} must be a number`);
    return value;
  };
  const stop = options.stop;
  if (stop !== undefined && stop !== null && (!Array.isArray(stop) || stop.some((item) => typeof item !== 'string'))) throw new BadRequest('options.stop must be a list of strings');
  const maxTokens = number('num_predict');
  const temperature = number('temperature');
  const seed = number('seed');
  return {
    ...(Array.isArray(stop) ? { stop: stop as string[] } : {}),
    // Ollama reads a negative num_predict as "until the context is full".
    ...(maxTokens !== undefined ? { maxTokens: maxTokens < 0 ? Number.MAX_SAFE_INTEGER : maxTokens } : {}),
    ...(temperature !== undefined ? { temperature } : {}),
    ...(seed !== undefined ? { seed } : {}),
  };
}

/** Ollama's closing metrics, in nanoseconds. */
function metrics(served: ServedModel, completion: Completion, started: number, loaded: boolean) {
  return {
    total_duration: Math.round((performance.now() - started) * 1e6),
    load_duration: loaded ? served.model.loadNanoseconds : 0,
    prompt_eval_count: completion.evaluatedPromptTokens,
    prompt_eval_duration: completion.promptNanoseconds,
    eval_count: completion.outputTokens,
    eval_duration: completion.outputNanoseconds,
  };
}

export class OllamaApi {
  /** The first request reports the load, as Ollama's first request after a pull does. */
  private loaded = false;

  constructor(private readonly served: ServedModel) {}

  version(exchange: Exchange): void {
    exchange.json(200, { version: this.served.version });
  }

  private tagEntry() {
    const { served } = this;
    return { name: served.name, model: served.name, modified_at: served.modifiedAt, size: served.model.description.bytes, digest: served.digest, details: served.details() };
  }

  tags(exchange: Exchange): void {
    exchange.json(200, { models: [this.tagEntry()] });
  }

  ps(exchange: Exchange): void {
    exchange.json(200, { models: this.loaded ? [{ ...this.tagEntry(), expires_at: '0001-01-01T00:00:00Z', size_vram: 0, context_length: this.served.model.contextSize }] : [] });
  }

  show(exchange: Exchange, body: Loose): void {
    const { served } = this;
    const name = body.model ?? body.name;
    if (!served.matches(name)) return exchange.json(404, { error: `model '${String(name)}' not found` });
    const { description } = served.model;
    const template = description.chat_template ?? '';
    const stops = served.codec.stop;
    exchange.json(200, {
      license: '',
      modelfile: [`# Modelfile of ${served.name}, served by episode-factory engine`, `FROM ${description.path}`, ...stops.map((stop) => `PARAMETER stop ${stop}`), ''].join('\n'),
      parameters: stops.map((stop) => `stop${' '.repeat(27)}"${stop}"`).join('\n'),
      template,
      details: served.details(),
      model_info: {
        'general.architecture': description.architecture,
        ...(description.name ? { 'general.basename': description.name } : {}),
        'general.parameter_count': description.parameters,
        [`${description.architecture}.context_length`]: description.context_length,
      },
      capabilities: ['completion', 'tools'],
      modified_at: served.modifiedAt,
    });
  }

  private unknownModel(exchange: Exchange, name: unknown): boolean {
    if (typeof name !== 'string' || name === '') {
      exchange.json(400, { error: 'model is required' });
      return true;
    }
    if (!this.served.matches(name)) {
      exchange.json(404, { error: `model "${name}" not found, try pulling it first` });
      return true;
    }
    return false;
  }

  async chat(exchange: Exchange, body: Loose): Promise<void> {
    if (this.unknownModel(exchange, body.model)) return;
    const stream = body.stream !== false;
    const head = () => ({ model: body.model as string, created_at: exchange.now() });
    const messages = body.messages ?? [];
    if (Array.isArray(messages) && messages.length === 0) return this.load(exchange, stream, { ...head(), message: { role: 'assistant', content: '' }, done_reason: 'load', done: true });
    const started = performance.now();
    const options = sampling(body.options);
    // A request that cannot be read is refused with 400 before a stream's 200 goes out.
    messagesOf(messages);
    toolsOf(body.tools);
    if (stream) exchange.openStream('application/x-ndjson');
    const turn = await this.served.chat(messages, body.tools, options, exchange.signal, stream ? (piece) => exchange.frame({ ...head(), message: { role: 'assistant', content: piece }, done: false }) : undefined);
    const loaded = this.markLoaded();
    const toolCalls = turn.calls.map((call, index) => ({ id: callId(`${JSON.stringify(messages)}\n${turn.completion.text}`, index), function: { index, name: call.name, arguments: call.arguments } }));
    const done = { done_reason: turn.completion.doneReason, done: true, ...metrics(this.served, turn.completion, started, loaded) };
    if (!stream) {
      return exchange.json(200, { ...head(), message: { role: 'assistant', content: turn.content, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) }, ...done });
    }
    if (toolCalls.length > 0) exchange.frame({ ...head(), message: { role: 'assistant', content: '', tool_calls: toolCalls }, done: false });
    exchange.frame({ ...head(), message: { role: 'assistant', content: '' }, ...done });
    exchange.end();
  }

  async generate(exchange: Exchange, body: Loose): Promise<void> {
    if (this.unknownModel(exchange, body.model)) return;
    const stream = body.stream !== false;
    const head = () => ({ model: body.model as string, created_at: exchange.now() });
    const prompt = body.prompt ?? '';
    if (typeof prompt !== 'string') throw new BadRequest('prompt must be a string');
    if (prompt === '') return this.load(exchange, stream, { ...head(), response: '', done: true, done_reason: 'load' });
    const started = performance.now();
    const raw = body.raw === true;
    const system = typeof body.system === 'string' ? body.system : undefined;
    const options = sampling(body.options);
    const text = raw ? prompt : this.served.templated(system, prompt);
    const stop = raw ? (options.stop ?? []) : [...this.served.codec.stop, ...(options.stop ?? [])];
    if (stream) exchange.openStream('application/x-ndjson');
    const completion = await this.served.complete(text, { ...options, stop }, exchange.signal, stream ? (piece) => exchange.frame({ ...head(), response: piece, done: false }) : undefined);
    const loaded = this.markLoaded();
    const done = { done: true, done_reason: completion.doneReason, ...metrics(this.served, completion, started, loaded) };
    if (!stream) return exchange.json(200, { ...head(), response: completion.text, ...done });
    exchange.frame({ ...head(), response: '', ...done });
    exchange.end();
  }

  private markLoaded(): boolean {
    const first = !this.loaded;
    this.loaded = true;
    return first;
  }

  private load(exchange: Exchange, stream: boolean, frame: Loose): void {
    this.markLoaded();
    if (!stream) return exchange.json(200, frame);
    exchange.openStream('application/x-ndjson');
    exchange.frame(frame);
    exchange.end();
  }
}
