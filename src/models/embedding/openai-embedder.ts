// Owns embedding through an OpenAI-compatible server (vLLM, llama.cpp's
// server, Ollama's /v1, or a hosted API) for semantic dedup: checking the
// model is served before any work, sending batches to /embeddings with the
// key from the variable the user named, and checking every vector before it
// is compared. Every request has a silence limit; every failure is one line
// with the flag that fixes it, and never carries the key. Also the `openai:`
// entry of the registry: --base-url, --api-key-env and --model-digest.

import { errorMessage, FactoryError } from '../../core/errors.js';
import { normaliseModelDigest } from '../model-pin.js';
import { STARTUP_CHECK_TIMEOUT_MS } from '../chat-model.js';
import { sameModel } from '../model-name.js';
import { readApiKey, resolveBaseUrl } from '../openai/openai-endpoint.js';
import { fetchWithSilenceLimit, formatSeconds, SilenceTimeoutError } from '../../core/timed-fetch.js';
import { DEFAULT_EMBED_BATCH, DEFAULT_EMBED_TIMEOUT_MS, type Embedder } from './embedder.js';
import type { EmbedderProvider } from './embedder-provider.js';

export interface OpenAIEmbedderOptions {
  model: string;
  /** The API root, e.g. http://127.0.0.1:8000/v1 (resolved by the caller). */
  baseUrl: string;
  apiKey?: string;
  /** What pins the weights, when the user supplied it (--model-digest). */
  digest?: string;
  batchSize?: number;
  timeoutMs?: number;
}

export class OpenAIEmbedder implements Embedder {
  readonly name: string;
  readonly digest: string | undefined;
  private readonly batchSize: number;
  private readonly timeoutMs: number;
  private checked = false;

  constructor(private readonly options: OpenAIEmbedderOptions) {
    if (!options.model.trim()) throw new FactoryError('usage', 'no model named', { fix: 'write --embed openai:<model>, e.g. --embed openai:nomic-embed-text' });
    this.name = `openai:${options.model}`;
    this.digest = options.digest;
    this.batchSize = options.batchSize ?? DEFAULT_EMBED_BATCH;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_EMBED_TIMEOUT_MS;
  }

  private headers(): Record<string, string> {
    return { 'content-type': 'application/json', ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}) };
  }

  /** Text from a server, safe to print: the key is never in it, however the server echoes it. */
  private redacted(text: string): string {
    const key = this.options.apiKey;
    const short = text.length > 200 ? `${text.slice(0, 200)}…` : text;
    return key ? short.split(key).join('[key]') : short;
  }

  private async request(path: string, silenceMs: number, body?: unknown): Promise<unknown> {
    const url = `${this.options.baseUrl}${path}`;
    const fetcher = fetchWithSilenceLimit({ silenceMs });
    let response: Response;
    let text: string;
    try {
      response = await fetcher(url, body === undefined ? { headers: this.headers() } : { method: 'POST', headers: this.headers(), body: JSON.stringify(body) });
      text = await response.text();
    } catch (error) {
      if (error instanceof SilenceTimeoutError) {
        throw new FactoryError('usage', `${url} did not answer within ${formatSeconds(error.silenceMs)}`, { fix: 'check the server (its log); a slow one needs a longer --model-timeout', cause: error });
      }
      const cause = (error as { cause?: { code?: string } }).cause?.code ?? errorMessage(error);
      throw new FactoryError('usage', `cannot reach ${url} (${cause})`, { fix: 'start the server, or point --base-url (or OPENAI_BASE_URL) at it', cause: error });
    }
    if (!response.ok) {
      let message = text;
      try {
        const parsed = JSON.parse(text) as { error?: { message?: string } | string; detail?: unknown };
        message = typeof parsed.error === 'string' ? parsed.error : (parsed.error?.message ?? (parsed.detail !== undefined ? JSON.stringify(parsed.detail) : text));
      } catch {
        // Not JSON: the text itself says what happened.
      }
      const auth = response.status === 401 || response.status === 403;
      throw new FactoryError('usage', `${url} answered HTTP ${response.status}: ${this.redacted(message.trim())}`, {
        fix: auth ? 'name the variable holding the key with --api-key-env' : response.status === 404 ? 'check --base-url (it ends with /v1) and that the server serves this embedding model' : 'check the server and the model',
      });
    }
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new FactoryError('usage', `${url} answered with something that is not JSON (${JSON.stringify(this.redacted(text.slice(0, 60)))})`, { fix: 'point --base-url at an OpenAI-compatible API root, e.g. http://127.0.0.1:8000/v1' });
    }
  }

  /** Confirms the server answers and serves the model (GET /models), once; embed() calls it first. */
  async check(): Promise<void> {
    if (this.checked) return;
    const listed = (await this.request('/models', Math.min(this.timeoutMs, STARTUP_CHECK_TIMEOUT_MS))) as { data?: { id?: unknown }[] };
    if (!Array.isArray(listed?.data)) throw new FactoryError('usage', `${this.options.baseUrl}/models answered without a model list: not an OpenAI-compatible server`, { fix: 'point --base-url at the API root, e.g. http://127.0.0.1:8000/v1' });
    const ids = listed.data.map((entry) => String(entry.id));
    // Ollama's /v1 lists `name:latest` for a model pulled as `name`.
    if (!ids.some((id) => id === this.options.model || sameModel(this.options.model, id))) {
      throw new FactoryError('usage', `${this.options.baseUrl} serves no model "${this.options.model}" (it serves: ${ids.length ? ids.sort().join(', ') : 'none'})`, { fix: `pass --embed openai:<one of them>` });
    }
    this.checked = true;
  }

  async embed(texts: string[]): Promise<number[][]> {
    await this.check();
    const vectors: number[][] = [];
    for (let start = 0; start < texts.length; start += this.batchSize) {
      const input = texts.slice(start, start + this.batchSize);
      const answer = (await this.request('/embeddings', this.timeoutMs, { model: this.options.model, input })) as { data?: { index?: unknown; embedding?: unknown }[] };
      vectors.push(...this.validated(answer?.data, input.length, vectors[0]?.length));
    }
    return vectors;
  }

  /** A malformed answer would silently compare garbage, so every vector is checked, and put back in input order. */
  private validated(data: { index?: unknown; embedding?: unknown }[] | undefined, expected: number, dimensions: number | undefined): number[][] {
    const problem = (reason: string) => new FactoryError('usage', `${this.options.baseUrl}/embeddings answered for "${this.options.model}" with ${reason}`, { fix: 'use an embedding model the server serves with /v1/embeddings' });
    if (!Array.isArray(data)) throw problem('no data list');
    if (data.length !== expected) throw problem(`${data.length} vectors for ${expected} inputs`);
    const ordered = data.every((entry) => typeof entry.index === 'number') ? [...data].sort((left, right) => (left.index as number) - (right.index as number)) : data;
    const width = dimensions ?? (ordered[0]?.embedding as unknown[] | undefined)?.length ?? 0;
    return ordered.map((entry) => {
      const vector = entry.embedding;
      if (!Array.isArray(vector) || vector.length === 0 || vector.length !== width) throw problem(`vectors of different or zero length (expected ${width})`);
      if (!vector.every((value) => typeof value === 'number' && Number.isFinite(value))) throw problem('a vector holding something other than finite numbers (base64 encoding is not asked for)');
      return vector as number[];
    });
  }
}

/** `--embed openai:<model>`, at --base-url (else OPENAI_BASE_URL), with the key from --api-key-env and the pin from --model-digest. */
export const OPENAI_EMBEDDING: EmbedderProvider = {
  name: 'openai',
  usage: 'openai:<model> with --base-url',
  options: [
    { key: 'baseUrl', flag: '--base-url', fixElsewhere: 'drop --base-url, or embed with openai:<model>' },
    { key: 'apiKeyEnv', flag: '--api-key-env', fixElsewhere: 'drop --api-key-env, or embed with openai:<model>' },
    { key: 'modelDigest', flag: '--model-digest', fixElsewhere: 'drop --model-digest, or embed with openai:<model>' },
  ],
  create: (model, options) => {
    const digest = options.modelDigest === undefined ? undefined : normaliseModelDigest(options.modelDigest);
    if (options.modelDigest !== undefined && digest === undefined) {
      throw new FactoryError('usage', `--model-digest "${options.modelDigest}" is not a digest`, { fix: 'pass sha256:<64 hex> of the weights file, or a 40-hex Hugging Face revision' });
    }
    const apiKey = readApiKey(options.apiKeyEnv);
    return new OpenAIEmbedder({ model, baseUrl: resolveBaseUrl(options.baseUrl), apiKey, digest, timeoutMs: options.timeoutMs, batchSize: options.batchSize });
  },
};
