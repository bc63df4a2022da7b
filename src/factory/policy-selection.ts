// Owns choosing the policy that drives a lane's episodes. Scripted lanes play
// each task's solution in the variant the seed drew. `--policy ollama:<model>`
// puts a local model served by Ollama in its place, `--policy openai:<model>`
// one served through an OpenAI-compatible API (vLLM, SGLang, llama.cpp's
// server); either is checked, before anything is written, by model-server.ts
// (the server answers, serves the model, something pins its weights), and its
// family's codec must be known.

import { FactoryError } from '../core/errors.js';
import type { Lane } from '../lanes/lane.js';
import { CODEC_NAMES, codecByName, codecForFamily } from '../policy/codecs/codec-registry.js';
import type { ModelCodec } from '../policy/codecs/model-codec.js';
import { DEFAULT_MODEL_TIMEOUT_MS } from '../policy/ollama/model-server-fetch.js';
import { STARTUP_CHECK_TIMEOUT_MS } from '../policy/ollama/ollama-model.js';
import { OllamaPolicy, type ModelMode, type ModelSettings } from '../policy/ollama/ollama-policy.js';
import { OpenAIPolicy, type OpenAIModelSettings } from '../policy/openai/openai-policy.js';
import type { PolicyFactory } from '../verify/episode-production.js';
import { checkModel, formatModelSpec, MODEL_SPEC_EXAMPLES, parseModelSpec, type CheckedModel, type ModelServerOptions, type ModelSpec } from './model-server.js';
import { policyFactoryFor } from './scripted-policy-factory.js';

export { DEFAULT_MODEL_TIMEOUT_MS, policyFactoryFor, STARTUP_CHECK_TIMEOUT_MS };

export type PolicySpec = { kind: 'scripted' } | { kind: 'model'; model: ModelSpec };

export function parsePolicySpec(text: string): PolicySpec {
  if (text === 'scripted') return { kind: 'scripted' };
  const model = parseModelSpec(text);
  if (model) return { kind: 'model', model };
  // A record kept by env serve names its agent this way; the agent is the client's, not the factory's.
  if (/^remote:./.test(text)) {
    throw new FactoryError('usage', `--policy ${text} is an agent that played through env serve, and only it can play again`, {
      fix: 'reproduce its records with `episode-factory replay <dir>`, or run the agent against `episode-factory env serve <lane>` again',
    });
  }
  throw new FactoryError('usage', `--policy "${text}" is not a policy`, { fix: `use scripted, ${MODEL_SPEC_EXAMPLES}` });
}

export interface ModelOptions extends ModelServerOptions {
  codec?: string;
  mode?: string;
  /** openai: stream answers (default true). */
  stream?: boolean;
}

export interface PreparedPolicy {
  factory: PolicyFactory;
  /** `<provider>:<model>` when a model plays: every episode's variant, record id suffix and regenerate flag. */
  policy?: string;
  /** The checked model, and how it is run (mode and codec). */
  model?: { checked: CheckedModel; mode: ModelMode; codec: ModelCodec };
}

/** Native mode only needs a codec for calls the server's parser missed, so Hermes (the commonest tool syntax) stands in for an unknown family. */
function chooseCodec(lane: Lane, family: string | null, model: string, options: ModelOptions, mode: ModelMode): ModelCodec {
  const named = options.codec ?? lane.document.model?.codec;
  if (named !== undefined) {
    const codec = codecByName(named);
    if (!codec) throw new FactoryError('usage', `--codec "${named}" is not a codec`, { fix: `use one of ${CODEC_NAMES.join(', ')}` });
    return codec;
  }
  const byFamily = codecForFamily(family);
  if (byFamily) return byFamily;
  if (mode === 'native') return codecByName('hermes');
  throw new FactoryError('usage', `cannot tell the chat format of ${model} (family ${family ?? 'unknown'})`, { fix: `pass --codec ${CODEC_NAMES.join('|')}` });
}

/** An OpenAI-compatible server names no family: the served id usually does (Qwen/Qwen2.5-1.5B-Instruct, meta-llama/Llama-3.2-3B, mistral-7b.gguf). */
export function familyFromModelId(id: string): string | null {
  const name = id.toLowerCase();
  if (/qwen/.test(name)) return 'qwen2';
  if (/llama-?3|llama3/.test(name)) return 'llama';
  if (/mi[sx]tral/.test(name)) return 'mistral';
  return null;
}

/** The policy for a run: scripted, or a model checked now, before any episode or file. */
export async function preparePolicy(lane: Lane, spec: PolicySpec, options: ModelOptions = {}): Promise<PreparedPolicy> {
  if (spec.kind === 'scripted') return { factory: policyFactoryFor(lane) };
  const modeName = options.mode ?? lane.document.model?.mode ?? 'native';
  if (modeName !== 'native' && modeName !== 'raw') throw new FactoryError('usage', `--mode "${modeName}" is not a mode`, { fix: 'use native or raw' });
  const mode: ModelMode = modeName;
  if (spec.model.provider === 'openai' && mode === 'raw') {
    throw new FactoryError('usage', `--mode raw renders the prompt for Ollama's /api/generate; ${formatModelSpec(spec.model)} is asked through chat completions, whose server applies its own chat template`, {
      fix: `${options.mode !== undefined ? 'drop --mode raw' : `pass --mode native (lane ${lane.name} asks for raw)`} (with openai:, calls the server returns as text are still read by --codec)`,
    });
  }
  const checked = await checkModel(spec.model, options);
  const temperature = lane.document.model?.temperature ?? 0.2;
  const maxTokens = lane.document.model?.max_output_tokens ?? 512;
  if (checked.provider === 'ollama') {
    const { info } = checked;
    if (mode === 'native' && !info.tools_capable) {
      throw new FactoryError('model_unavailable', `${spec.model.model} does not declare tool support (its /api/show capabilities lack "tools"), so native tool calling cannot work`, {
        fix: 'run it with --mode raw, which renders the prompt with the family codec',
      });
    }
    const settings: ModelSettings = { mode, codec: chooseCodec(lane, info.family, info.model, options, mode), temperature, num_predict: maxTokens };
    return {
      policy: formatModelSpec(spec.model),
      model: { checked, mode, codec: settings.codec },
      factory: (request) => new OllamaPolicy({ info, settings, random: request.random, timeoutMs: checked.timeoutMs }),
    };
  }
  const settings: OpenAIModelSettings = {
    codec: chooseCodec(lane, familyFromModelId(checked.model.info.model), checked.model.info.model, options, mode),
    temperature,
    max_tokens: maxTokens,
    stream: options.stream ?? true,
  };
  return {
    policy: formatModelSpec(spec.model),
    model: { checked, mode, codec: settings.codec },
    factory: (request) => new OpenAIPolicy({ model: checked.model, settings, connection: checked.connection, random: request.random }),
  };
}
