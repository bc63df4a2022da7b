// Owns choosing the policy that drives a lane's episodes. Scripted lanes play
// each task's solution in the variant the seed drew. `--policy ollama:<model>`
// puts a local model in its place, after checking, before anything is
// written, that Ollama answers, the model is pulled, its digest is readable,
// and its family's codec is known.

import { FactoryError } from '../core/errors.js';
import { resolveOllamaHost } from '../core/ollama-host.js';
import type { Lane } from '../lanes/lane.js';
import { CODEC_NAMES, codecByName, codecForFamily } from '../policy/codecs/codec-registry.js';
import type { ModelCodec } from '../policy/codecs/model-codec.js';
import { DEFAULT_MODEL_TIMEOUT_MS } from '../policy/ollama/model-server-fetch.js';
import { inspectModel, STARTUP_CHECK_TIMEOUT_MS, type ModelInfo } from '../policy/ollama/ollama-model.js';
import { OllamaPolicy, type ModelMode, type ModelSettings } from '../policy/ollama/ollama-policy.js';
import type { PolicyFactory } from '../verify/episode-production.js';
import { policyFactoryFor } from './scripted-policy-factory.js';

export { DEFAULT_MODEL_TIMEOUT_MS, policyFactoryFor, STARTUP_CHECK_TIMEOUT_MS };

export type PolicySpec = { kind: 'scripted' } | { kind: 'ollama'; model: string };

export function parsePolicySpec(text: string): PolicySpec {
  if (text === 'scripted') return { kind: 'scripted' };
  const match = /^ollama:(.+)$/.exec(text);
  if (match && match[1]!.trim()) return { kind: 'ollama', model: match[1]!.trim() };
  throw new FactoryError('usage', `--policy "${text}" is not a policy`, { fix: 'use scripted, or ollama:<model> (e.g. ollama:qwen2.5:1.5b)' });
}

export interface ModelOptions {
  host?: string;
  codec?: string;
  mode?: string;
  /**
   * The longest the model server may stay silent on one request, in
   * milliseconds (default DEFAULT_MODEL_TIMEOUT_MS); the start-up check waits
   * at most STARTUP_CHECK_TIMEOUT_MS, or this when it is shorter.
   */
  timeoutMs?: number;
}

export interface PreparedPolicy {
  factory: PolicyFactory;
  /** `ollama:<model>` when a model plays: every episode's variant, record id suffix and regenerate flag. */
  policy?: string;
  model?: { info: ModelInfo; settings: ModelSettings };
}

function chooseCodec(lane: Lane, info: ModelInfo, options: ModelOptions, mode: ModelMode): ModelCodec {
  const named = options.codec ?? lane.document.model?.codec;
  if (named !== undefined) {
    const codec = codecByName(named);
    if (!codec) throw new FactoryError('usage', `--codec "${named}" is not a codec`, { fix: `use one of ${CODEC_NAMES.join(', ')}` });
    return codec;
  }
  const byFamily = codecForFamily(info.family);
  if (byFamily) return byFamily;
  // Native mode only needs a codec for calls the server's own parser missed.
  if (mode === 'native') return codecByName('hermes')!;
  throw new FactoryError('usage', `cannot tell the chat format of ${info.model} (family ${info.family ?? 'unknown'})`, { fix: `pass --codec ${CODEC_NAMES.join('|')}` });
}

/** The policy for a run: scripted, or a model checked now, before any episode or file. */
export async function preparePolicy(lane: Lane, spec: PolicySpec, options: ModelOptions = {}): Promise<PreparedPolicy> {
  if (spec.kind === 'scripted') return { factory: policyFactoryFor(lane) };
  const modeName = options.mode ?? lane.document.model?.mode ?? 'native';
  if (modeName !== 'native' && modeName !== 'raw') throw new FactoryError('usage', `--mode "${modeName}" is not a mode`, { fix: 'use native or raw' });
  const mode: ModelMode = modeName;
  const timeoutMs = options.timeoutMs ?? DEFAULT_MODEL_TIMEOUT_MS;
  const info = await inspectModel(resolveOllamaHost(options.host), spec.model, { timeoutMs: Math.min(timeoutMs, STARTUP_CHECK_TIMEOUT_MS) });
  if (mode === 'native' && !info.tools_capable) {
    throw new FactoryError('model_unavailable', `${spec.model} does not declare tool support (its /api/show capabilities lack "tools"), so native tool calling cannot work`, {
      fix: 'run it with --mode raw, which renders the prompt with the family codec',
    });
  }
  const settings: ModelSettings = {
    mode,
    codec: chooseCodec(lane, info, options, mode),
    temperature: lane.document.model?.temperature ?? 0.2,
    num_predict: lane.document.model?.max_output_tokens ?? 512,
  };
  return {
    policy: `ollama:${spec.model}`,
    model: { info, settings },
    factory: (request) => new OllamaPolicy({ info, settings, random: request.random, timeoutMs }),
  };
}
