// Owns `openai:<model>` as a provider of chat models: a model on an
// OpenAI-compatible server (vLLM, SGLang, llama.cpp's server, Ollama's /v1)
// at --base-url, with its key read from the variable --api-key-env names and
// its weights pinned by what the server reports or by --model-digest. Its
// flags (--base-url, --api-key-env, --model-digest, --retries, --no-stream)
// are refused when no such model plays; every check runs before anything is
// written, and every way it fails names the flag that fixes it.

import { FactoryError } from '../../core/errors.js';
import type { ChatModelProvider, ModelServerOptions } from '../chat-model-provider.js';
import { normaliseModelDigest, pinnedRevision } from '../model-pin.js';
import type { OpenAIServer } from './chat-completion.js';
import { OpenAIChatModel, OPENAI_MODES } from './openai-chat-model.js';
import { readApiKey, resolveBaseUrl } from './openai-endpoint.js';
import { inspectOpenAIModel } from './openai-inspection.js';

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
function checkDigestTargets(served: readonly string[], entries: readonly string[]): void {
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

export const openAIProvider: ChatModelProvider = {
  name: 'openai',
  example: 'openai:<model> (e.g. openai:Qwen/Qwen2.5-1.5B-Instruct, with --base-url)',
  modes: OPENAI_MODES,
  modeRefusal(spec, mode, fix) {
    return new FactoryError('usage', `--mode ${mode} renders the prompt for Ollama's /api/generate; ${spec} is asked through chat completions, whose server applies its own chat template`, {
      fix: `${fix} (with openai:, calls the server returns as text are still read by --codec)`,
    });
  },
  refuseStrayFlags(options: ModelServerOptions) {
    const own: [string, unknown][] = [
      ['--base-url', options.baseUrl],
      ['--api-key-env', options.apiKeyEnv],
      ['--model-digest', options.modelDigests?.length ? options.modelDigests : undefined],
    ];
    for (const [flag, value] of own) {
      if (value !== undefined) throw new FactoryError('usage', `${flag} applies to a model served through an OpenAI-compatible API, and none plays here`, { fix: `use openai:<model>, or drop ${flag}` });
    }
    if (options.stream === false) throw new FactoryError('usage', '--no-stream applies to openai:<model>, and none plays here', { fix: 'drop --no-stream' });
    if (options.retries !== undefined) throw new FactoryError('usage', '--retries applies to openai:<model>, and none plays here', { fix: 'drop --retries' });
  },
  checkFlags(models, options) {
    checkDigestTargets([...new Set(models)], options.modelDigests ?? []);
  },
  async check(model, options) {
    const environment = options.environment ?? process.env;
    const given = digestFor(model, options.modelDigests ?? []);
    const supplied = given === undefined ? undefined : normaliseModelDigest(given);
    if (given !== undefined && supplied === undefined) {
      throw new FactoryError('usage', `--model-digest "${given}" is not a digest`, {
        fix: 'pass the sha256 of the weights file (`sha256sum model.gguf`, as sha256:<64 hex> or 64 hex) or the 40-hex Hugging Face revision the server loaded',
      });
    }
    const apiKey = readApiKey(options.apiKeyEnv, environment);
    const server: OpenAIServer = { baseUrl: resolveBaseUrl(options.baseUrl, environment), ...(apiKey !== undefined ? { apiKey } : {}) };
    const info = await inspectOpenAIModel(server, model, { timeoutMs: options.startupTimeoutMs, ...(options.flag ? { flag: options.flag } : {}) });
    const reported = info.digest ?? undefined;
    if (supplied !== undefined && reported !== undefined && supplied.replace(/^sha256:/, '') !== reported.replace(/^sha256:/, '')) {
      throw new FactoryError('model_unavailable', `--model-digest ${supplied} is not the digest ${reported} the server at ${server.baseUrl} reports for ${model}`, {
        fix: 'drop --model-digest (the server pins this model itself), or point --base-url at the server that holds those weights',
      });
    }
    const revision = pinnedRevision(info.weights);
    if (supplied !== undefined && /^[0-9a-f]{40}$/.test(supplied) && revision !== undefined && revision.length === 40 && supplied !== revision) {
      throw new FactoryError('model_unavailable', `--model-digest ${supplied} is not the revision ${revision} the server at ${server.baseUrl} loaded for ${model} (weights "${info.weights}")`, {
        fix: 'drop --model-digest (the weights the server loaded name their revision), or point --base-url at the server that holds those weights',
      });
    }
    const digest = supplied ?? reported ?? null;
    if (digest === null && revision === undefined) {
      throw new FactoryError('model_unavailable', `nothing pins the weights of ${model} at ${server.baseUrl}: the server reports ${info.weights === null ? 'no weights id' : `weights "${info.weights}", which names no revision`} and no digest, so a record could not be traced to the model that acted`, {
        fix: 'pass --model-digest with the sha256 of the weights file (`sha256sum model.gguf`) or the 40-hex Hugging Face revision the server loaded',
      });
    }
    return new OpenAIChatModel(info, digest, {
      server,
      timeoutMs: options.timeoutMs,
      ...(options.retries !== undefined ? { retries: options.retries } : {}),
      stream: options.stream ?? true,
    });
  },
};
