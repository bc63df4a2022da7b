// Owns what a provider of embedders tells the registry: the name that
// `--embed <provider>:<model>` calls it by, how a usage fix shows it, which
// server options are its own (with the flag that sets each), and how it makes
// an embedder for a model. A provider is one file exporting one of these.

import type { Embedder } from './embedder.js';

/** Where the server is and how long to wait on it, as the command line gives them; each provider reads its own and the shared ones. */
export interface EmbedderOptions {
  /** Ollama's server (--ollama-host); OLLAMA_HOST when absent. */
  host?: string | undefined;
  /** An OpenAI-compatible API root (--base-url); OPENAI_BASE_URL when absent. */
  baseUrl?: string | undefined;
  /** The environment variable holding an OpenAI-compatible server's key (--api-key-env). */
  apiKeyEnv?: string | undefined;
  /** What pins the weights when the server does not say (--model-digest). */
  modelDigest?: string | undefined;
  /** Shared: the longest one request may stay silent (--model-timeout), in milliseconds. */
  timeoutMs?: number | undefined;
  /** Shared: texts per request. */
  batchSize?: number | undefined;
}

/** A server option that one provider alone reads. */
export interface ProviderOption {
  readonly key: 'host' | 'baseUrl' | 'apiKeyEnv' | 'modelDigest';
  readonly flag: string;
  /** The fix when it is given with another provider's --embed. */
  readonly fixElsewhere: string;
}

export interface EmbedderProvider {
  /** The part of `--embed <provider>:<model>` before the colon. */
  readonly name: string;
  /** How the fix for an unknown --embed shows this provider, e.g. `ollama:<model> (e.g. ollama:nomic-embed-text)`. */
  readonly usage: string;
  readonly options: readonly ProviderOption[];
  /** Checks the options and makes the embedder; nothing is sent to the server until it embeds. */
  create(model: string, options: EmbedderOptions): Embedder;
}
