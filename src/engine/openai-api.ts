// Owns the OpenAI-compatible routes the engine answers, as Ollama's /v1 does:
// GET /v1/models, and POST /v1/chat/completions with tools, whole or streamed
// as server-sent events (content deltas, each call in a delta of its own with
// its arguments as a JSON string, the finish_reason, a usage chunk when
// stream_options.include_usage asks, then [DONE]). Errors are OpenAI's
// `{"error": {"message", "type"}}` bodies.

import { BadRequest, callId, messagesOf, toolsOf } from './chat-translation.js';
import type { Exchange } from './http-exchange.js';
import type { SamplingRequest, ServedModel } from './served-model.js';

type Loose = Record<string, unknown>;
const isLoose = (value: unknown): value is Loose => typeof value === 'object' && value !== null && !Array.isArray(value);

export function openAIError(exchange: Exchange, status: number, message: string, type = 'invalid_request_error'): void {
  exchange.json(status, { error: { message, type, param: null, code: null } });
}

function sampling(body: Loose): SamplingRequest {
  const number = (key: string) => {
    const value = body[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'number' || !Number.isFinite(value)) throw new BadRequest(`${key} must be a number`);
    return value;
  };
  const stop = body.stop;
  let stops: string[] | undefined;
  if (typeof stop === 'string') stops = [stop];
  else if (Array.isArray(stop) && stop.every((item) => typeof item === 'string')) stops = stop as string[];
  else if (stop !== undefined && stop !== null) throw new BadRequest('stop must be a string or a list of strings');
  const maxTokens = number('max_completion_tokens') ?? number('max_tokens');
  const temperature = number('temperature');
  const seed = number('seed');
  return {
    ...(stops ? { stop: stops } : {}),
    ...(maxTokens !== undefined ? { maxTokens } : {}),
    ...(temperature !== undefined ? { temperature } : {}),
    ...(seed !== undefined ? { seed } : {}),
  };
}

export class OpenAIApi {
  constructor(private readonly served: ServedModel) {}

  models(exchange: Exchange): void {
    const created = Math.floor(Date.parse(this.served.modifiedAt) / 1000);
    // max_model_len is vLLM's field for the context; clients (the factory among them) record it whatever the server.
    exchange.json(200, { object: 'list', data: [{ id: this.served.name, object: 'model', created, owned_by: 'library', max_model_len: this.served.model.contextSize }] });
  }

  async chatCompletions(exchange: Exchange, body: Loose): Promise<void> {
    const { served } = this;
    if (typeof body.model !== 'string' || body.model === '') return openAIError(exchange, 400, 'model is required');
    if (!served.matches(body.model)) return openAIError(exchange, 404, `model "${body.model}" not found, try pulling it first`, 'not_found_error');
    const stream = body.stream === true;
    const usageWanted = isLoose(body.stream_options) && body.stream_options.include_usage === true;
    const id = `chatcmpl-${callId(JSON.stringify(body.messages ?? null), 0).slice(5, 17)}`;
    const created = Math.floor(Date.parse(exchange.now()) / 1000);
    const chunk = (choices: unknown[], extra: Loose = {}) => exchange.event(JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, system_fingerprint: `fp_${served.digest.slice(0, 10)}`, choices, ...extra }));
    // A request that cannot be read is refused with 400 before a stream's 200 goes out.
    messagesOf(body.messages);
    toolsOf(body.tools);
    const options = sampling(body);
    if (stream) {
      exchange.openStream('text/event-stream');
      chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
    }
    const turn = await served.chat(body.messages, body.tools, options, exchange.signal, stream ? (piece) => chunk([{ index: 0, delta: { content: piece }, finish_reason: null }]) : undefined);
    const toolCalls = turn.calls.map((call, index) => ({
      id: callId(`${JSON.stringify(body.messages)}\n${turn.completion.text}`, index),
      type: 'function',
      function: { name: call.name, arguments: JSON.stringify(call.arguments) },
    }));
    const finishReason = toolCalls.length > 0 ? 'tool_calls' : turn.completion.doneReason === 'length' ? 'length' : 'stop';
    const usage = { prompt_tokens: turn.completion.promptTokens, completion_tokens: turn.completion.outputTokens, total_tokens: turn.completion.promptTokens + turn.completion.outputTokens };
    if (!stream) {
      const message = { role: 'assistant', content: toolCalls.length > 0 && turn.content === '' ? null : turn.content, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) };
      return exchange.json(200, { id, object: 'chat.completion', created, model: body.model, system_fingerprint: `fp_${served.digest.slice(0, 10)}`, choices: [{ index: 0, message, finish_reason: finishReason }], usage });
    }
    toolCalls.forEach((call, index) => chunk([{ index: 0, delta: { tool_calls: [{ index, ...call }] }, finish_reason: null }]));
    chunk([{ index: 0, delta: {}, finish_reason: finishReason }]);
    if (usageWanted) chunk([], { usage });
    exchange.event('[DONE]');
    exchange.end();
  }
}
