// Owns how a model served by Ollama is named in a record's provenance, for
// every part it plays (the policy, the user): the name it was asked by, a
// short version and the full digest, what /api/tags and /api/show said of it,
// how it was run, and the Ollama version. The sampling options are drawn here
// too, once an episode, so each actor's seed comes from its own substream.

import type { JsonObject } from '../../core/json-value.js';
import type { Random } from '../../core/random.js';
import type { Actor } from '../policy-contract.js';
import type { ModelInfo } from './ollama-model.js';

export interface SamplingOptions {
  seed: number;
  temperature: number;
  num_predict: number;
}

/** The options of every request an actor makes in one episode: its seed drawn from `random`. */
export function samplingOptions(random: Random, settings: { temperature: number; num_predict: number }): SamplingOptions {
  return { seed: random.int(0, 2 ** 31 - 1), temperature: settings.temperature, num_predict: settings.num_predict };
}

/** The actor, its keys in the order records have always written them; `how` (codec, mode, options…) sits between the model's details and the Ollama version. */
export function modelActor(role: string, info: ModelInfo, how: JsonObject): Actor & JsonObject {
  return {
    role,
    kind: 'model',
    name: info.model,
    version: info.digest.replace(/^sha256:/, '').slice(0, 12),
    provider: 'ollama',
    digest: info.digest,
    family: info.family,
    parameter_size: info.parameter_size,
    quantization: info.quantization,
    ...how,
    ollama_version: info.ollama_version,
  };
}
