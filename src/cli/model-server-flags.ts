// Owns the flags that say where a model is served and how to reach it, shared
// by every command a model can play in (generate, gate, lanes rewrite):
// --ollama-host for ollama:<model>; --base-url, --api-key-env, --model-digest,
// --retries and --no-stream for openai:<model>; --model-timeout for both.
// The key itself is never a flag: only the name of the variable holding it.

import type { Command } from 'commander';
import { FactoryError } from '../core/errors.js';
import { DEFAULT_MODEL_TIMEOUT_MS, STARTUP_CHECK_TIMEOUT_MS } from '../models/chat-model.js';
import { refuseStrayFlags, type ModelServerOptions, type ModelSpec } from '../models/model-registry.js';
import { DEFAULT_RETRIES } from '../models/openai/chat-completion.js';
import { DEFAULT_OPENAI_BASE_URL } from '../models/openai/openai-endpoint.js';
import { parseSeconds } from './model-timeout.js';

export interface ModelServerFlags {
  ollamaHost?: string;
  baseUrl?: string;
  apiKeyEnv?: string;
  modelDigest?: string[];
  retries?: string;
  stream?: boolean;
  modelTimeout?: string;
}

export function addModelServerFlags(command: Command): Command {
  return command
    .option('--ollama-host <url>', 'ollama:<model>: where Ollama listens (default: OLLAMA_HOST, else http://127.0.0.1:11434)')
    .option('--base-url <url>', `openai:<model>: the OpenAI-compatible API root of vLLM, SGLang, llama.cpp's server or Ollama (/v1) (default: OPENAI_BASE_URL, else ${DEFAULT_OPENAI_BASE_URL})`)
    .option('--api-key-env <name>', 'openai:<model>: the environment variable holding the API key (the key is sent as a bearer token, never written anywhere)')
    .option(
      '--model-digest <digest>',
      "openai:<model>: pins the weights when the server does not report a revision: the weights file's sha256 (`sha256sum model.gguf`) or a 40-hex Hugging Face revision; " +
        'with two served models (policy and user), say whose: --model-digest <model>=<digest>, once for each',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option('--retries <n>', `openai:<model>: retries of a request answered 429 or 5xx, with backoff (honouring Retry-After) (default ${DEFAULT_RETRIES})`)
    .option('--no-stream', 'openai:<model>: ask for whole answers instead of streamed (SSE) ones')
    .option(
      '--model-timeout <seconds>',
      `with a model: the longest its server may stay silent on one request (before it answers, or between two streamed chunks); ` +
        `past it the episode is an infra error (default ${DEFAULT_MODEL_TIMEOUT_MS / 1000}; the start-up check waits at most ${STARTUP_CHECK_TIMEOUT_MS / 1000}). ` +
        "Raise it for a server that loads models slowly or runs on CPU; the lane's wall_time_ms still bounds a whole episode",
    );
}

/** The flags as options, after refusing any that apply to no model named here. */
export function modelServerOptions(flags: ModelServerFlags, specs: readonly (ModelSpec | undefined)[]): ModelServerOptions {
  const retries = flags.retries === undefined ? undefined : Number(flags.retries);
  if (flags.retries !== undefined && (!/^[0-9]{1,2}$/.test(flags.retries) || retries! > 10)) {
    throw new FactoryError('usage', `--retries "${flags.retries}" is not a whole number from 0 to 10`, { fix: `pass e.g. --retries ${DEFAULT_RETRIES}` });
  }
  const options: ModelServerOptions = {
    ...(flags.ollamaHost !== undefined ? { host: flags.ollamaHost } : {}),
    ...(flags.baseUrl !== undefined ? { baseUrl: flags.baseUrl } : {}),
    ...(flags.apiKeyEnv !== undefined ? { apiKeyEnv: flags.apiKeyEnv } : {}),
    ...(flags.modelDigest !== undefined ? { modelDigests: flags.modelDigest } : {}),
    ...(retries !== undefined ? { retries } : {}),
    ...(flags.stream === false ? { stream: false } : {}),
    ...(flags.modelTimeout !== undefined ? { timeoutMs: parseSeconds('--model-timeout', flags.modelTimeout, DEFAULT_MODEL_TIMEOUT_MS / 1000) } : {}),
  };
  refuseStrayFlags(specs, options);
  return options;
}
