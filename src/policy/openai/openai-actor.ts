// Owns how a model served through an OpenAI-compatible API (vLLM, SGLang,
// llama.cpp's server, Ollama's /v1) is named in a record's provenance, for
// every part it plays (the policy, the user, the writer): the served id, what
// the server said of the weights it loaded, the pin (a digest, or the
// revision its weights name), how it was run, and the server's version. The
// base URL and the API key are never part of it: a port is not the model,
// and a key is a secret. The sampling options are drawn here too, once an
// episode, so each actor's seed comes from its own substream.

import type { JsonObject } from '../../core/json-value.js';
import { pinnedRevision } from '../../core/model-pin.js';
import type { Random } from '../../core/random.js';
import type { Actor } from '../policy-contract.js';
import type { OpenAIModelInfo } from './openai-model.js';

/** A checked model and what pins it: the digest the server reported or the user supplied, or null when its weights id names a revision. */
export interface OpenAIModel {
  info: OpenAIModelInfo;
  digest: string | null;
}

export interface OpenAISampling {
  seed: number;
  temperature: number;
  max_tokens: number;
}

/** The options of every request an actor makes in one episode: its seed drawn from `random`. */
export function openAISampling(random: Random, settings: { temperature: number; max_tokens: number }): OpenAISampling {
  return { seed: random.int(0, 2 ** 31 - 1), temperature: settings.temperature, max_tokens: settings.max_tokens };
}

/** The short version a record shows: the first 12 hex characters of the pin. */
export function shortPin(model: OpenAIModel): string {
  const pin = model.digest ?? pinnedRevision(model.info.weights) ?? '';
  return pin.replace(/^sha256:/, '').slice(0, 12) || 'unpinned';
}

export function openAIActor(role: string, model: OpenAIModel, how: JsonObject): Actor & JsonObject {
  const { info } = model;
  return {
    role,
    kind: 'model',
    name: info.model,
    version: shortPin(model),
    provider: 'openai',
    digest: model.digest,
    weights: info.weights,
    server: info.server,
    max_model_len: info.max_model_len,
    chat_template_sha256: info.chat_template_sha256,
    ...how,
    server_version: info.server_version,
  };
}
