// Owns one chat completion against an OpenAI-compatible server (vLLM,
// llama.cpp, SGLang, Ollama's /v1): the request body, the answer read back
// whole or reassembled from its event stream, retries after 429 and 5xx with
// a backoff the episode can cut short, and what counts as the server failing
// rather than the model behaving. Every failure of the server (an HTTP error,
// a dropped connection, a silence past the timeout, a stream cut off, a body
// that is not the protocol) becomes one InfrastructureError with a one-line
// reason starting `openai POST /chat/completions`; a status that says the
// request itself is wrong (400, 401, 403, 404…) is a ModelServerRefused, so
// the caller can report a configuration problem. Text and tool calls the
// model wrote are never judged here: invalid JSON in a call's arguments is
// the model's behaviour, handed on as it came. The API key goes in the
// Authorization header and nowhere else: every text put in a message is
// scrubbed of it first.

import type { JsonObject } from '../../core/json-value.js';
import { errorMessage } from '../../core/errors.js';
import { fetchWithSilenceLimit } from '../../core/timed-fetch.js';
import { InfrastructureError } from '../chat-model.js';
import { failureCause, transportFailure } from '../transport-failure.js';
import { readServerSentEvents } from './sse-reader.js';
import { textPreview } from '../../core/clipped-text.js';

export interface OpenAIServer {
  /** Base URL including the /v1 prefix, no trailing slash, e.g. http://127.0.0.1:8000/v1 */
  baseUrl: string;
  /** The API key, read by the caller from the environment variable the user named; it only ever goes in the Authorization: Bearer header, never in any message, error or log. */
  apiKey?: string;
}

export interface OpenAIToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type OpenAIMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: OpenAIToolCall[] }
  | { role: 'tool'; content: string; tool_call_id: string };

export interface OpenAITool {
  type: 'function';
  function: { name: string; description: string; parameters: JsonObject };
}

export interface ChatCompletionRequest {
  model: string;
  messages: OpenAIMessage[];
  /** Omitted from the body when undefined or empty. */
  tools?: OpenAITool[];
  temperature: number;
  top_p?: number;
  seed: number;
  max_tokens: number;
  /** Omitted from the body when undefined or empty. */
  stop?: string[];
  /** When true, the body also asks for `stream_options: { include_usage: true }`. */
  stream: boolean;
}

export interface ChatCompletionUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface ChatCompletionAnswer {
  /** Content concatenated ('' when none). */
  text: string;
  /** In index order; id null when the server sent none. arguments is the raw string as sent (may be invalid JSON: that is the model's behaviour, not a failure). */
  toolCalls: { id: string | null; name: string; arguments: string }[];
  finishReason: string | null;
  usage: ChatCompletionUsage | null;
  /** Requests made: 1 + retries. */
  attempts: number;
  /** Reasoning text a server's reasoning parser split off (vLLM, llama.cpp: `reasoning_content`); absent when there was none. */
  reasoning?: string;
}

export interface ChatCallOptions {
  /** Silence limit per request in ms (before headers, and between two chunks). */
  timeoutMs: number;
  /** The episode's signal: when it aborts, its reason is rethrown as is (not wrapped). */
  signal: AbortSignal;
  /** Retries after a 429 or 5xx (default 3); never after any other status, a timeout or a protocol error. */
  retries?: number;
  /** First backoff in ms (default 500), doubled each retry, capped at 8000; a Retry-After header (seconds or HTTP date) overrides it, capped at 30000. */
  backoffMs?: number;
}

export const DEFAULT_RETRIES = 3;
export const DEFAULT_BACKOFF_MS = 500;
export const MAX_BACKOFF_MS = 8_000;
export const MAX_RETRY_AFTER_MS = 30_000;

const ENDPOINT = 'POST /chat/completions';
const PREFIX = `openai ${ENDPOINT}`;
/** The most of an error body read for its message: an error page can be large. */
const MAX_ERROR_BODY_CHARS = 64 * 1024;

/** The server's answer was an HTTP status that says the request is wrong (a 4xx other than 429): retrying cannot help, the configuration must change. */
export class ModelServerRefused extends InfrastructureError {
  readonly status: number;
  constructor(message: string, status: number, options?: ErrorOptions) {
    super(message, options);
    this.status = status;
  }
}

/** A status the server may answer differently next time. */
class RetryableStatus extends InfrastructureError {
  constructor(
    message: string,
    readonly status: number,
    readonly serverMessage: string,
    readonly retryAfterMs: number | null,
  ) {
    super(message);
  }
}

/** `http://host:8000/v1` → `http://host:8000`: where vLLM's /version, llama.cpp's /props and Ollama's /api live. */
export function openAIOrigin(baseUrl: string): string {
  const trimmed = baseUrl.replace(/\/+$/, '');
  return trimmed.endsWith('/v1') ? trimmed.slice(0, -3) : trimmed;
}

/** Removes the key's value from any text bound for a message, however the server came to echo it. */
export function redactKey(text: string, apiKey: string | undefined): string {
  return apiKey ? text.split(apiKey).join('[redacted]') : text;
}

export function authorizationHeaders(server: OpenAIServer): Record<string, string> {
  return server.apiKey ? { Authorization: `Bearer ${server.apiKey}` } : {};
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The server's own words in an error body: OpenAI's `{error: {message}}`,
 * `{error: "text"}`, FastAPI's `{detail}`, vLLM's older `{object: "error",
 * message}`; a short preview of anything else.
 */
export function serverErrorMessage(text: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text.trim() === '' ? 'an empty body' : textPreview(text);
  }
  if (isObject(parsed)) {
    const { error, detail, message } = parsed;
    if (isObject(error) && typeof error.message === 'string') return error.message;
    if (typeof error === 'string') return error;
    if (typeof detail === 'string') return detail;
    if (detail !== undefined) return JSON.stringify(detail).slice(0, 200);
    if (typeof message === 'string') return message;
  }
  return textPreview(text);
}

/** What a status means for the person running the factory. */
function statusHint(status: number): string {
  if (status === 401 || status === 403) return 'check the key in the variable named by --api-key-env';
  if (status === 404) return 'check --base-url (with its /v1) and that the server lists the model at GET /models';
  if (status === 400 || status === 422) return 'the server refused the request as sent: check the model supports tools and the sampling options';
  return 'the server refused the request';
}

/** Milliseconds to wait from a Retry-After header: seconds, or an HTTP date measured against the response's own Date header (so no clock is read here). */
export function retryAfterMs(headers: Headers): number | null {
  const value = headers.get('retry-after')?.trim();
  if (!value) return null;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.min(Number(value) * 1000, MAX_RETRY_AFTER_MS);
  const at = Date.parse(value);
  const sent = Date.parse(headers.get('date') ?? '');
  if (Number.isNaN(at) || Number.isNaN(sent)) return null;
  return Math.min(Math.max(at - sent, 0), MAX_RETRY_AFTER_MS);
}

async function readCapped(response: Response): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    while (text.length < MAX_ERROR_BODY_CHARS) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return text;
}

function requestBody(request: ChatCompletionRequest): Record<string, unknown> {
  const body: Record<string, unknown> = { model: request.model, messages: request.messages };
  if (request.tools && request.tools.length > 0) {
    body.tools = request.tools;
    body.tool_choice = 'auto';
  }
  body.temperature = request.temperature;
  if (request.top_p !== undefined) body.top_p = request.top_p;
  body.seed = request.seed;
  body.max_tokens = request.max_tokens;
  if (request.stop && request.stop.length > 0) body.stop = request.stop;
  body.stream = request.stream;
  if (request.stream) body.stream_options = { include_usage: true };
  return body;
}

function usageOf(value: unknown): ChatCompletionUsage | null {
  if (!isObject(value)) return null;
  const count = (key: string) => (typeof value[key] === 'number' ? (value[key] as number) : 0);
  const prompt = count('prompt_tokens');
  const completion = count('completion_tokens');
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: typeof value.total_tokens === 'number' ? value.total_tokens : prompt + completion };
}

/** Arguments as the model wrote them: a string as is; an object (some servers parse them) back to JSON text. */
function argumentsText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  return JSON.stringify(value);
}

/** An error a server sent inside a 200 answer or a stream (vLLM, SGLang). */
function inBandError(value: Record<string, unknown>): string | undefined {
  if (value.error !== undefined) return isObject(value.error) && typeof value.error.message === 'string' ? value.error.message : typeof value.error === 'string' ? value.error : JSON.stringify(value.error);
  if (value.object === 'error') return typeof value.message === 'string' ? value.message : JSON.stringify(value);
  return undefined;
}

function firstChoice(choices: unknown[]): Record<string, unknown> | undefined {
  const objects = choices.filter(isObject);
  return objects.find((choice) => (choice.index ?? 0) === 0) ?? objects[0];
}

function readWhole(text: string, attempts: number): ChatCompletionAnswer {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new InfrastructureError(`the answer is not JSON (${textPreview(text)})`);
  }
  if (!isObject(parsed)) throw new InfrastructureError(`the answer is not a chat completion (${textPreview(text)})`);
  const error = inBandError(parsed);
  if (error !== undefined) throw new InfrastructureError(`the server answered 200 with an error: ${error}`);
  if (!Array.isArray(parsed.choices)) throw new InfrastructureError(`the answer is not a chat completion: it has no choices (${textPreview(text)})`);
  const choice = firstChoice(parsed.choices);
  if (!choice || !isObject(choice.message)) throw new InfrastructureError(`the answer is not a chat completion: its first choice has no message (${textPreview(text)})`);
  const message = choice.message;
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls.filter(isObject) : [];
  const answer: ChatCompletionAnswer = {
    text: typeof message.content === 'string' ? message.content : '',
    toolCalls: calls.map((call) => {
      const fn = isObject(call.function) ? call.function : {};
      return { id: typeof call.id === 'string' && call.id !== '' ? call.id : null, name: typeof fn.name === 'string' ? fn.name : '', arguments: argumentsText(fn.arguments) };
    }),
    finishReason: typeof choice.finish_reason === 'string' ? choice.finish_reason : null,
    usage: usageOf(parsed.usage),
    attempts,
  };
  const reasoning = message.reasoning_content ?? message.reasoning;
  if (typeof reasoning === 'string' && reasoning !== '') answer.reasoning = reasoning;
  return answer;
}

interface CallBeingBuilt {
  index: number;
  id: string | null;
  name: string;
  arguments: string;
}

/**
 * Reassembles a streamed answer. Tool-call fragments are keyed by `index`;
 * one without an index (some servers omit it when there is one call) belongs
 * to the call being built, unless it carries an id of its own that differs
 * from that call's, which starts the next one.
 */
async function readStream(body: ReadableStream<Uint8Array>, attempts: number): Promise<ChatCompletionAnswer> {
  const events = readServerSentEvents(body);
  let text = '';
  let reasoning = '';
  let finishReason: string | null = null;
  let usage: ChatCompletionUsage | null = null;
  const calls = new Map<number, CallBeingBuilt>();
  let lastIndex: number | undefined;
  for await (const chunk of events) {
    if (!isObject(chunk)) throw new InfrastructureError(`event ${events.events} of the stream is not a JSON object (${textPreview(JSON.stringify(chunk))})`);
    const error = inBandError(chunk);
    if (error !== undefined) throw new InfrastructureError(`the server reported an error mid-answer: ${error}`);
    if (chunk.usage !== undefined && chunk.usage !== null) usage = usageOf(chunk.usage) ?? usage;
    if (!Array.isArray(chunk.choices)) {
      if (chunk.usage !== undefined) continue;
      throw new InfrastructureError(`event ${events.events} of the stream is not a chat completion chunk: it has no choices (${textPreview(JSON.stringify(chunk))})`);
    }
    const choice = firstChoice(chunk.choices);
    if (!choice) continue;
    if (typeof choice.finish_reason === 'string') finishReason = choice.finish_reason;
    const delta = isObject(choice.delta) ? choice.delta : {};
    if (typeof delta.content === 'string') text += delta.content;
    const thought = delta.reasoning_content ?? delta.reasoning;
    if (typeof thought === 'string') reasoning += thought;
    if (!Array.isArray(delta.tool_calls)) continue;
    for (const fragment of delta.tool_calls.filter(isObject)) {
      const fn = isObject(fragment.function) ? fragment.function : {};
      const id = typeof fragment.id === 'string' && fragment.id !== '' ? fragment.id : null;
      let index: number;
      if (typeof fragment.index === 'number' && Number.isInteger(fragment.index)) index = fragment.index;
      else if (lastIndex === undefined) index = 0;
      else {
        const current = calls.get(lastIndex)!;
        index = id !== null && current.id !== null && id !== current.id ? Math.max(...calls.keys()) + 1 : lastIndex;
      }
      lastIndex = index;
      let call = calls.get(index);
      if (!call) {
        call = { index, id: null, name: '', arguments: '' };
        calls.set(index, call);
      }
      if (call.id === null && id !== null) call.id = id;
      if (call.name === '' && typeof fn.name === 'string') call.name = fn.name;
      call.arguments += argumentsText(fn.arguments);
    }
  }
  if (!events.sawDone && finishReason === null) {
    if (events.events === 0 && events.strayLine !== null) throw new InfrastructureError(`the answer is not an event stream (${textPreview(events.strayLine)})`);
    const tail = events.cutOffTail === null ? '' : `, in the middle of an event (${textPreview(events.cutOffTail)})`;
    throw new InfrastructureError(`the stream was cut off after ${events.events} event${events.events === 1 ? '' : 's'}${tail}, before its finish_reason and [DONE]`);
  }
  const answer: ChatCompletionAnswer = {
    text,
    toolCalls: [...calls.values()].sort((a, b) => a.index - b.index).map(({ id, name, arguments: args }) => ({ id, name, arguments: args })),
    finishReason,
    usage,
    attempts,
  };
  if (reasoning !== '') answer.reasoning = reasoning;
  return answer;
}

/** One line saying how the request failed; the key's value never survives into it. */
function failure(error: unknown, apiKey: string | undefined): InfrastructureError {
  const scrub = (text: string) => redactKey(text, apiKey);
  const transport = transportFailure(PREFIX, error, scrub);
  if (transport) return transport;
  if (error instanceof ModelServerRefused) return error;
  if (error instanceof InfrastructureError) return new InfrastructureError(scrub(`${PREFIX}: ${error.message}`));
  const cause = failureCause(error);
  const message = errorMessage(error);
  return new InfrastructureError(scrub(`${PREFIX} failed: ${message}${cause && !message.includes(cause) ? ` (${cause})` : ''}`));
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

async function attempt(server: OpenAIServer, body: string, streamed: boolean, options: ChatCallOptions, attempts: number): Promise<ChatCompletionAnswer> {
  // Each request ends with its attempt, whatever happened, so no connection outlives it.
  const own = new AbortController();
  const stop = () => own.abort(options.signal.reason);
  options.signal.addEventListener('abort', stop, { once: true });
  if (options.signal.aborted) stop();
  const timed = fetchWithSilenceLimit({ silenceMs: options.timeoutMs, signal: own.signal });
  try {
    const response = await timed(`${server.baseUrl.replace(/\/+$/, '')}/chat/completions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: streamed ? 'text/event-stream' : 'application/json', ...authorizationHeaders(server) },
      body,
    });
    if (!response.ok) {
      const said = redactKey(serverErrorMessage(await readCapped(response)), server.apiKey);
      const status = response.status;
      if (status === 429 || status >= 500) throw new RetryableStatus(`${PREFIX}: HTTP ${status}: ${said}`, status, said, retryAfterMs(response.headers));
      if (status >= 400) throw new ModelServerRefused(`${PREFIX}: HTTP ${status}: ${said} (${statusHint(status)})`, status);
      throw new InfrastructureError(`${PREFIX}: HTTP ${status}: ${said}`);
    }
    if (!response.body) throw new InfrastructureError('the answer had no body');
    const type = response.headers.get('content-type') ?? '';
    // A server that ignores `stream` answers whole, and says so in its content type.
    if (streamed && !type.includes('application/json')) return await readStream(response.body, attempts);
    return readWhole(await new Response(response.body).text(), attempts);
  } finally {
    options.signal.removeEventListener('abort', stop);
    own.abort();
  }
}

export async function chatCompletion(server: OpenAIServer, request: ChatCompletionRequest, options: ChatCallOptions): Promise<ChatCompletionAnswer> {
  const retries = Math.max(0, options.retries ?? DEFAULT_RETRIES);
  const firstBackoff = options.backoffMs ?? DEFAULT_BACKOFF_MS;
  const body = JSON.stringify(requestBody(request));
  for (let attempts = 1; ; attempts++) {
    try {
      return await attempt(server, body, request.stream, options, attempts);
    } catch (error) {
      // Cut off by the episode: the runner already knows why, and says so in the record.
      if (options.signal.aborted) throw options.signal.reason;
      if (!(error instanceof RetryableStatus)) throw failure(error, server.apiKey);
      if (attempts > retries) {
        const tries = attempts === 1 ? '' : ` after ${attempts} attempts`;
        throw new InfrastructureError(`${PREFIX}: HTTP ${error.status}${tries}: ${error.serverMessage}`);
      }
      const backoff = Math.min(firstBackoff * 2 ** (attempts - 1), MAX_BACKOFF_MS);
      await sleep(error.retryAfterMs ?? backoff, options.signal);
    }
  }
}
