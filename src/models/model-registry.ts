// Owns the providers of chat models, one line each, and turning
// `<provider>:<model>` with the server flags into a checked ChatModel for
// every part a model plays (the policy, the user, the writer). A provider is
// one entry here and its own folder; nothing outside models/ asks which
// provider a model is.

import { FactoryError } from '../core/errors.js';
import { DEFAULT_MODEL_TIMEOUT_MS, STARTUP_CHECK_TIMEOUT_MS, type ChatModel } from './chat-model.js';
import type { ChatModelProvider, ModelServerOptions } from './chat-model-provider.js';
import { ollamaProvider } from './ollama/ollama-provider.js';
import { openAIProvider } from './openai/openai-provider.js';

export type { ModelServerOptions };

export const PROVIDERS: readonly ChatModelProvider[] = [ollamaProvider, openAIProvider];

export interface ModelSpec {
  provider: string;
  model: string;
}

export const MODEL_SPEC_EXAMPLES = PROVIDERS.map((provider) => provider.example).join(' or ');

/** `<provider>:<model>` for a provider listed here; undefined for anything else. */
export function parseModelSpec(text: string): ModelSpec | undefined {
  const match = /^([a-z]+):(.+)$/.exec(text); // `.` stops at a line break: a name split over lines is no spec
  const provider = PROVIDERS.find((candidate) => candidate.name === match?.[1]);
  const model = match?.[2]?.trim();
  return provider && model ? { provider: provider.name, model } : undefined;
}

export function formatModelSpec(spec: ModelSpec): string {
  return `${spec.provider}:${spec.model}`;
}

export function providerOf(spec: ModelSpec): ChatModelProvider {
  const provider = PROVIDERS.find((candidate) => candidate.name === spec.provider);
  if (!provider) throw new FactoryError('usage', `"${formatModelSpec(spec)}" names no model provider`, { fix: `use ${MODEL_SPEC_EXAMPLES}` });
  return provider;
}

/** Flags that only mean something for a provider none of whose models plays are a mistake worth saying; so are flags its models cannot take. */
export function refuseStrayFlags(specs: readonly (ModelSpec | undefined)[], options: ModelServerOptions): void {
  const playing = specs.filter((spec) => spec !== undefined);
  for (const provider of PROVIDERS) {
    const models = playing.filter((spec) => spec.provider === provider.name).map((spec) => spec.model);
    if (models.length === 0) provider.refuseStrayFlags(options);
  }
  for (const provider of PROVIDERS) {
    const models = playing.filter((spec) => spec.provider === provider.name).map((spec) => spec.model);
    if (models.length > 0) provider.checkFlags?.(models, options);
  }
}

/** Checks the model now, through its provider: the server answers, serves it, and something pins its weights. */
export async function checkModel(spec: ModelSpec, options: ModelServerOptions = {}): Promise<ChatModel> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_MODEL_TIMEOUT_MS;
  return providerOf(spec).check(spec.model, { ...options, timeoutMs, startupTimeoutMs: Math.min(timeoutMs, STARTUP_CHECK_TIMEOUT_MS) });
}
