// Owns choosing the policy that drives a lane's episodes. Scripted lanes play
// each task's solution in the variant the seed drew. `--policy
// <provider>:<model>` puts a chat model in its place (ollama:, openai:, as the
// model registry lists them), checked by its provider before anything is
// written (the server answers, serves the model, something pins its
// weights); its mode must be one the provider can run, and its family's codec
// must be known.

import { FactoryError } from '../core/errors.js';
import type { Lane } from '../lanes/lane.js';
import type { ChatModel, ModelMode } from '../models/chat-model.js';
import { CODEC_NAMES, codecByName, codecForFamily } from '../models/codecs/codec-registry.js';
import type { ModelCodec } from '../models/codecs/model-codec.js';
import { checkModel, formatModelSpec, MODEL_SPEC_EXAMPLES, parseModelSpec, providerOf, type ModelServerOptions, type ModelSpec } from '../models/model-registry.js';
import { ModelPolicy, type ModelSettings } from '../policy/model-policy.js';
import type { PolicyFactory } from '../verify/episode-production.js';
import { policyFactoryFor } from './scripted-policy-factory.js';


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
}

export interface PreparedPolicy {
  factory: PolicyFactory;
  /** `<provider>:<model>` when a model plays: every episode's variant, record id suffix and regenerate flag. */
  policy?: string;
  /** The checked model, and how it is run (mode and codec). */
  model?: { checked: ChatModel; mode: ModelMode; codec: ModelCodec };
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

/** The policy for a run: scripted, or a model checked now, before any episode or file. */
export async function preparePolicy(lane: Lane, spec: PolicySpec, options: ModelOptions = {}): Promise<PreparedPolicy> {
  if (spec.kind === 'scripted') return { factory: policyFactoryFor(lane) };
  const modeName = options.mode ?? lane.document.model?.mode ?? 'native';
  if (modeName !== 'native' && modeName !== 'raw') throw new FactoryError('usage', `--mode "${modeName}" is not a mode`, { fix: 'use native or raw' });
  const mode: ModelMode = modeName;
  const provider = providerOf(spec.model);
  if (!provider.modes.includes(mode)) {
    const fix = options.mode !== undefined ? `drop --mode ${mode}` : `pass --mode native (lane ${lane.name} asks for ${mode})`;
    throw provider.modeRefusal?.(formatModelSpec(spec.model), mode, fix) ?? new FactoryError('usage', `${formatModelSpec(spec.model)} cannot run in ${mode} mode`, { fix });
  }
  const checked = await checkModel(spec.model, options);
  const settings: ModelSettings = {
    mode,
    codec: chooseCodec(lane, checked.family, spec.model.model, options, mode),
    temperature: lane.document.model?.temperature ?? 0.2,
    maxTokens: lane.document.model?.max_output_tokens ?? 512,
  };
  const model = checked.inMode(mode, settings.codec);
  return {
    policy: formatModelSpec(spec.model),
    model: { checked, mode, codec: settings.codec },
    factory: (request) => new ModelPolicy({ model, settings, random: request.random }),
  };
}
