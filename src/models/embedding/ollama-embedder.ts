// Owns embedding through a local Ollama server with the official `ollama`
// client: where the server is, checking the model is there before any work,
// recording the model's digest for the report, and turning every way this can
// fail into one line with the command that fixes it. Every request has a
// silence limit, so a server that never answers ends the command instead of
// holding it forever. Also the `ollama:` entry of the registry (--ollama-host).

import { Ollama } from 'ollama';
import { errorMessage, FactoryError } from '../../core/errors.js';
import { STARTUP_CHECK_TIMEOUT_MS } from '../chat-model.js';
import { resolveOllamaHost } from '../ollama/ollama-host.js';
import { sameModel } from '../model-name.js';
import { fetchWithSilenceLimit, formatSeconds, SilenceTimeoutError } from '../../core/timed-fetch.js';
import { DEFAULT_EMBED_BATCH, DEFAULT_EMBED_TIMEOUT_MS, type Embedder } from './embedder.js';
import type { EmbedderProvider } from './embedder-provider.js';

interface ClientErrorShape {
  name?: string;
  status_code?: number;
  cause?: { code?: string; message?: string };
}

export interface OllamaEmbedderOptions {
  model: string;
  /** Overrides OLLAMA_HOST. */
  host?: string;
  batchSize?: number;
  /** Where OLLAMA_HOST is read from; the process environment unless a caller needs otherwise. */
  environment?: NodeJS.ProcessEnv;
  /** The longest one request may stay silent, in milliseconds (default DEFAULT_EMBED_TIMEOUT_MS; the /api/tags check waits at most STARTUP_CHECK_TIMEOUT_MS). */
  timeoutMs?: number;
}

export interface OllamaModelInfo {
  name: string;
  digest: string;
}

export class OllamaEmbedder implements Embedder {
  readonly name: string;
  readonly model: string;
  readonly host: string;
  digest: string | undefined;
  private readonly batchSize: number;
  private readonly client: Ollama;
  private readonly checkClient: Ollama;
  private checked: OllamaModelInfo | undefined;

  constructor(options: OllamaEmbedderOptions) {
    if (!options.model.trim()) throw new FactoryError('usage', 'no Ollama model named', { fix: 'write --embed ollama:<model>, e.g. --embed ollama:nomic-embed-text' });
    this.model = options.model.trim();
    this.name = `ollama:${this.model}`;
    this.host = resolveOllamaHost(options.host, options.environment);
    this.batchSize = options.batchSize ?? DEFAULT_EMBED_BATCH;
    if (!Number.isInteger(this.batchSize) || this.batchSize < 1) throw new RangeError(`batch size must be a positive integer, got ${this.batchSize}`);
    const timeoutMs = options.timeoutMs ?? DEFAULT_EMBED_TIMEOUT_MS;
    if (!(timeoutMs > 0)) throw new RangeError(`timeout must be a positive number of milliseconds, got ${timeoutMs}`);
    this.client = new Ollama({ host: this.host, fetch: fetchWithSilenceLimit({ silenceMs: timeoutMs }) });
    this.checkClient = new Ollama({ host: this.host, fetch: fetchWithSilenceLimit({ silenceMs: Math.min(timeoutMs, STARTUP_CHECK_TIMEOUT_MS) }) });
  }

  /** A request that was answered badly rather than refused: silence past the limit, or a body that is not JSON. */
  private badAnswer(endpoint: string, error: unknown): FactoryError | undefined {
    if (error instanceof SilenceTimeoutError) {
      const embedding = endpoint === '/api/embed';
      return new FactoryError('usage', `Ollama at ${this.host} did not answer ${endpoint}${embedding ? ` for "${this.model}"` : ''} within ${formatSeconds(error.silenceMs)}`, {
        fix: embedding
          ? 'check the server (`ollama ps`, its log); a slow one (a CPU) needs a longer --model-timeout'
          : 'point --ollama-host (or OLLAMA_HOST) at a running Ollama (`ollama serve`); a host that accepts connections but never answers is not one',
        cause: error,
      });
    }
    if (error instanceof SyntaxError) {
      return new FactoryError('usage', `${this.host} answered ${endpoint} with something that is not JSON (${errorMessage(error)})`, {
        fix: 'point --ollama-host (or OLLAMA_HOST) at an Ollama server, started with `ollama serve`',
        cause: error,
      });
    }
    return undefined;
  }

  private unreachable(error: unknown): FactoryError {
    const cause = (error as ClientErrorShape).cause;
    const detail = cause?.code ?? cause?.message ?? errorMessage(error);
    return new FactoryError('usage', `cannot reach Ollama at ${this.host} (${detail})`, {
      fix: 'start it with `ollama serve`, or point --ollama-host (or OLLAMA_HOST) at a running Ollama',
      cause: error,
    });
  }

  /** Confirms the server answers and has the model (GET /api/tags), once; embed() calls it first. */
  async check(): Promise<OllamaModelInfo> {
    if (this.checked) return this.checked;
    let models: { name: string; model?: string; digest: string }[];
    try {
      models = (await this.checkClient.list()).models;
    } catch (error) {
      const bad = this.badAnswer('/api/tags', error);
      if (bad) throw bad;
      if ((error as ClientErrorShape).name === 'ResponseError') {
        throw new FactoryError('usage', `${this.host} answered /api/tags with HTTP ${(error as ClientErrorShape).status_code}: ${errorMessage(error)}`, {
          fix: 'point --ollama-host (or OLLAMA_HOST) at an Ollama server, started with `ollama serve`',
          cause: error,
        });
      }
      throw this.unreachable(error);
    }
    if (!Array.isArray(models)) {
      throw new FactoryError('usage', `${this.host} answered /api/tags without a model list`, { fix: 'point --ollama-host (or OLLAMA_HOST) at an Ollama server, started with `ollama serve`' });
    }
    const found = models.find((entry) => sameModel(this.model, entry.name) || (entry.model !== undefined && sameModel(this.model, entry.model)));
    if (!found) {
      const available = models.map((entry) => entry.name).sort();
      throw new FactoryError('usage', `Ollama at ${this.host} has no model "${this.model}" (it has: ${available.length ? available.join(', ') : 'none'})`, {
        fix: `ollama pull ${this.model}`,
      });
    }
    this.checked = { name: found.name, digest: found.digest };
    this.digest = found.digest;
    return this.checked;
  }

  async embed(texts: string[]): Promise<number[][]> {
    await this.check();
    const vectors: number[][] = [];
    for (let start = 0; start < texts.length; start += this.batchSize) {
      const input = texts.slice(start, start + this.batchSize);
      let embeddings: unknown;
      try {
        embeddings = (await this.client.embed({ model: this.model, input })).embeddings;
      } catch (error) {
        const bad = this.badAnswer('/api/embed', error);
        if (bad) throw bad;
        if ((error as ClientErrorShape).name !== 'ResponseError') throw this.unreachable(error);
        const message = errorMessage(error);
        const missing = (error as ClientErrorShape).status_code === 404 || /not found/i.test(message);
        throw new FactoryError('usage', `Ollama at ${this.host} could not embed with "${this.model}": ${message}`, {
          fix: missing ? `ollama pull ${this.model}` : 'use an embedding model (for example `ollama pull nomic-embed-text`, then --embed ollama:nomic-embed-text)',
          cause: error,
        });
      }
      vectors.push(...this.validated(embeddings, input.length, vectors[0]?.length));
    }
    return vectors;
  }

  /** A malformed answer would silently compare garbage, so every vector is checked before it is used. */
  private validated(embeddings: unknown, expected: number, dimensions: number | undefined): number[][] {
    const problem = (reason: string) =>
      new FactoryError('usage', `Ollama at ${this.host} answered /api/embed for "${this.model}" with ${reason}`, {
        fix: 'use an embedding model (for example `ollama pull nomic-embed-text`) and an Ollama recent enough to serve /api/embed',
      });
    if (!Array.isArray(embeddings)) throw problem('no embeddings list');
    if (embeddings.length !== expected) throw problem(`${embeddings.length} vectors for ${expected} inputs`);
    const width = dimensions ?? (embeddings[0] as unknown[] | undefined)?.length ?? 0;
    for (const vector of embeddings) {
      if (!Array.isArray(vector) || vector.length === 0 || vector.length !== width) throw problem(`vectors of different or zero length (expected ${width})`);
      if (!vector.every((value) => typeof value === 'number' && Number.isFinite(value))) throw problem('a vector holding something other than finite numbers');
    }
    return embeddings as number[][];
  }
}

/** `--embed ollama:<model>`, at --ollama-host (else OLLAMA_HOST). */
export const OLLAMA_EMBEDDING: EmbedderProvider = {
  name: 'ollama',
  usage: 'ollama:<model> (e.g. ollama:nomic-embed-text)',
  options: [{ key: 'host', flag: '--ollama-host', fixElsewhere: 'drop --ollama-host (use --base-url)' }],
  create: (model, options) => new OllamaEmbedder({ model, host: options.host, timeoutMs: options.timeoutMs, batchSize: options.batchSize }),
};
