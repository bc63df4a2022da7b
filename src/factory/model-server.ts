// Owns turning `<provider>:<model>` and the server flags into a checked model
// server, for every part a model plays (the policy, the user, the writer):
// `ollama:<model>` at --ollama-host, or `openai:<model>` on an
// OpenAI-compatible server (vLLM, SGLang, llama.cpp's server, Ollama's /v1)
// at --base-url, with its key read from the variable --api-key-env names and
// its weights pinned by what the server reports or by --model-digest. Every
// check runs before anything is written, and every way it fails names the
// flag that fixes it.

import { FactoryError } from '../core/errors.js';
import { normaliseModelDigest, pinnedRevision } from '../core/model-pin.js';
import { resolveOllamaHost } from '../core/ollama-host.js';
import { readApiKey, resolveBaseUrl } from '../core/openai-endpoint.js';
import type { OpenAIModel } from '../policy/openai/openai-actor.js';
import type { OpenAIServer } from '../policy/openai/openai-chat.js';
import { inspectOpenAIModel } from '../policy/openai/openai-model.js';
import type { OpenAIConnection } from '../policy/openai/openai-policy.js';
import { DEFAULT_MODEL_TIMEOUT_MS } from '../policy/ollama/model-server-fetch.js';
import { inspectModel, STARTUP_CHECK_TIMEOUT_MS, type ModelInfo } from '../policy/ollama/ollama-model.js';

export { DEFAULT_OPENAI_BASE_URL } from '../core/openai-endpoint.js';

export type ModelProvider = 'ollama' | 'openai';

export interface ModelSpec {
  provider: ModelProvider;
  model: string;
}

export const MODEL_SPEC_EXAMPLES = 'ollama:<model> (e.g. ollama:qwen2.5:1.5b) or openai:<model> (e.g. openai:Qwen/Qwen2.5-1.5B-Instruct, with --base-url)';

/** `ollama:<model>` or `openai:<model>`; undefined for anything else. */
export function parseModelSpec(text: string): ModelSpec | undefined {
  const match = /^(ollama|openai):(.+)$/.exec(text);
  const model = match?.[2]?.trim();
  return match && model ? { provider: match[1] as ModelProvider, model } : undefined;
}

export function formatModelSpec(spec: ModelSpec): string {
  return `${spec.provider}:${spec.model}`;
}

/** The server flags a command takes; which apply depends on the provider. */
export interface ModelServerOptions {
  /** --ollama-host (ollama). */
  host?: string;
  /** --base-url (openai); else OPENAI_BASE_URL, else DEFAULT_OPENAI_BASE_URL. */
  baseUrl?: string;
  /** --api-key-env (openai): the name of the variable holding the key, never the key. */
  apiKeyEnv?: string;
  /**
   * --model-digest (openai), each `<digest>` or `<model>=<digest>`: pins
   * weights the server does not. A bare digest is for the one served model
   * named; modelServerOptions refuses it when there are two.
   */
  modelDigests?: readonly string[];
  /** The longest the server may stay silent on one request, in milliseconds. */
  timeoutMs?: number;
  /** Retries after a 429 or 5xx (openai). */
  retries?: number;
  /** Where OPENAI_BASE_URL and the key are read from. */
  environment?: NodeJS.ProcessEnv;
  /** The flag that named the model (--policy, --user, --model), for the fix when it is not served. */
  flag?: string;
}

export type CheckedModel =
  | { provider: 'ollama'; spec: ModelSpec; info: ModelInfo; timeoutMs: number }
  | { provider: 'openai'; spec: ModelSpec; model: OpenAIModel; connection: OpenAIConnection };

/** Flags that only mean something for the other provider are a mistake worth saying. */
export function refuseStrayFlags(specs: readonly (ModelSpec | undefined)[], options: ModelServerOptions): void {
  const providers = new Set(specs.filter((spec) => spec !== undefined).map((spec) => spec.provider));
  const openAIOnly: [string, unknown][] = [
    ['--base-url', options.baseUrl],
    ['--api-key-env', options.apiKeyEnv],
    ['--model-digest', options.modelDigests?.length ? options.modelDigests : undefined],
  ];
  if (!providers.has('openai')) {
    for (const [flag, value] of openAIOnly) {
      if (value !== undefined) throw new FactoryError('usage', `${flag} applies to a model served through an OpenAI-compatible API, and none plays here`, { fix: `use openai:<model>, or drop ${flag}` });
    }
  }
  if (!providers.has('ollama') && options.host !== undefined) {
    throw new FactoryError('usage', '--ollama-host applies to ollama:<model>, and none plays here', { fix: 'drop --ollama-host (an OpenAI-compatible server is found with --base-url)' });
  }
}

/** Checks the model now: the server answers, serves it, and something pins its weights. */
export async function checkModel(spec: ModelSpec, options: ModelServerOptions = {}): Promise<CheckedModel> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_MODEL_TIMEOUT_MS;
  const startup = Math.min(timeoutMs, STARTUP_CHECK_TIMEOUT_MS);
  if (spec.provider === 'ollama') {
    const info = await inspectModel(resolveOllamaHost(options.host), spec.model, { timeoutMs: startup });
    return { provider: 'ollama', spec, info, timeoutMs };
  }
  const environment = options.environment ?? process.env;
  const given = digestFor(spec.model, options.modelDigests ?? []);
  const supplied = given === undefined ? undefined : normaliseModelDigest(given);
  if (given !== undefined && supplied === undefined) {
    throw new FactoryError('usage', `--model-digest "${given}" is not a digest`, {
      fix: 'pass the sha256 of the weights file (`sha256sum model.gguf`, as sha256:<64 hex> or 64 hex) or the 40-hex Hugging Face revision the server loaded',
    });
  }
  const apiKey = readApiKey(options.apiKeyEnv, environment);
  const server: OpenAIServer = { baseUrl: resolveBaseUrl(options.baseUrl, environment), ...(apiKey !== undefined ? { apiKey } : {}) };
  const info = await inspectOpenAIModel(server, spec.model, { timeoutMs: startup, ...(options.flag ? { flag: options.flag } : {}) });
  const reported = info.digest ?? undefined;
  if (supplied !== undefined && reported !== undefined && supplied.replace(/^sha256:/, '') !== reported.replace(/^sha256:/, '')) {
    throw new FactoryError('model_unavailable', `--model-digest ${supplied} is not the digest ${reported} the server at ${server.baseUrl} reports for ${spec.model}`, {
      fix: 'drop --model-digest (the server pins this model itself), or point --base-url at the server that holds those weights',
    });
  }
  const revision = pinnedRevision(info.weights);
  if (supplied !== undefined && /^[0-9a-f]{40}$/.test(supplied) && revision !== undefined && revision.length === 40 && supplied !== revision) {
    throw new FactoryError('model_unavailable', `--model-digest ${supplied} is not the revision ${revision} the server at ${server.baseUrl} loaded for ${spec.model} (weights "${info.weights}")`, {
      fix: 'drop --model-digest (the weights the server loaded name their revision), or point --base-url at the server that holds those weights',
    });
  }
  const digest = supplied ?? reported ?? null;
  if (digest === null && revision === undefined) {
    throw new FactoryError('model_unavailable', `nothing pins the weights of ${spec.model} at ${server.baseUrl}: the server reports ${info.weights === null ? 'no weights id' : `weights "${info.weights}", which names no revision`} and no digest, so a record could not be traced to the model that acted`, {
      fix: 'pass --model-digest with the sha256 of the weights file (`sha256sum model.gguf`) or the 40-hex Hugging Face revision the server loaded',
    });
  }
  return {
    provider: 'openai',
    spec,
    model: { info, digest },
    connection: { server, timeoutMs, ...(options.retries !== undefined ? { retries: options.retries } : {}) },
  };
}

/** `<model>=<digest>` splits at its last `=`; a digest never holds one. */
function splitDigest(entry: string): { model?: string; digest: string } {
  const at = entry.lastIndexOf('=');
  return at < 0 ? { digest: entry } : { model: entry.slice(0, at).trim(), digest: entry.slice(at + 1).trim() };
}

/** The --model-digest given for this model: one naming it, else a bare one. */
export function digestFor(model: string, entries: readonly string[]): string | undefined {
  const split = entries.map(splitDigest);
  return (split.find((entry) => entry.model === model) ?? split.find((entry) => entry.model === undefined))?.digest;
}

/** Every --model-digest must name a served model of this command, and a bare one is only clear when there is one. */
export function checkDigestTargets(specs: readonly (ModelSpec | undefined)[], entries: readonly string[]): void {
  const served = [...new Set(specs.filter((spec) => spec?.provider === 'openai').map((spec) => spec!.model))];
  const split = entries.map(splitDigest);
  for (const entry of split) {
    if (entry.model !== undefined && !served.includes(entry.model)) {
      throw new FactoryError('usage', `--model-digest ${entry.model}=…: no openai:${entry.model} plays here`, { fix: `name one of ${served.map((model) => `openai:${model}`).join(', ') || 'the openai: models'}` });
    }
  }
  const bare = split.filter((entry) => entry.model === undefined).length;
  if (bare > 1 || (bare === 1 && served.length > 1)) {
    throw new FactoryError('usage', `--model-digest: ${bare > 1 ? 'several digests' : 'one digest'} without a model, and ${served.length} served models play here`, {
      fix: `say whose it is: --model-digest <model>=<digest>, e.g. --model-digest ${served[0] ?? 'my-model'}=sha256:<64 hex>`,
    });
  }
}

/** What pins the model in a run's identity: a resumed run must find the same. */
export function checkedPin(checked: CheckedModel): string {
  if (checked.provider === 'ollama') return checked.info.digest;
  return checked.model.digest ?? pinnedRevision(checked.model.info.weights) ?? '';
}

/** The model as the start of a run names it on stderr: name, short pin, what and where the server is. */
export function describeModel(checked: CheckedModel): string {
  if (checked.provider === 'ollama') {
    const { info } = checked;
    return `${info.model} (${info.digest.replace(/^sha256:/, '').slice(0, 12)}, ${info.family ?? 'unknown family'}) at ${info.host}, Ollama ${info.ollama_version}`;
  }
  const { info } = checked.model;
  const pin = checkedPin(checked).replace(/^sha256:/, '').slice(0, 12);
  const server = info.server === 'unknown' ? 'an OpenAI-compatible server' : `${info.server}${info.server_version ? ` ${info.server_version}` : ''}`;
  return `${info.model} (${pin}${info.weights ? `, weights ${info.weights}` : ''}) at ${checked.connection.server.baseUrl}, ${server}${checked.connection.server.apiKey ? ', with an API key' : ''}`;
}

/** What to check when the server fails mid-run. */
export function serverCheckHint(checked: CheckedModel | undefined): string {
  if (checked === undefined) return 'check the model server';
  if (checked.provider === 'ollama') return `check the Ollama server at ${checked.info.host} (\`ollama ps\`, its log; raise --model-timeout if it is only slow)`;
  return `check the server at ${checked.connection.server.baseUrl} (\`curl ${checked.connection.server.baseUrl}/models\`, its log; raise --model-timeout if it is only slow)`;
}
