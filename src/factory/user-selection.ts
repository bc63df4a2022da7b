// Owns choosing who plays the user of tasks that declare facts: the scripted
// user by default, or `--user ollama:<model>` / `--user openai:<model>`, a
// model checked before anything is written by model-server.ts, as for a model
// policy.

import { FactoryError } from '../core/errors.js';
import type { Lane } from '../lanes/lane.js';
import { createOllamaUser, type UserModelSettings } from '../policy/ollama/ollama-user.js';
import { OpenAIUser } from '../policy/openai/openai-user.js';
import type { UserFactory } from '../verify/episode-production.js';
import { checkModel, formatModelSpec, MODEL_SPEC_EXAMPLES, parseModelSpec, type CheckedModel, type ModelServerOptions, type ModelSpec } from './model-server.js';

export type UserSpec = { kind: 'scripted' } | { kind: 'model'; model: ModelSpec };

export function parseUserSpec(text: string): UserSpec {
  if (text === 'scripted') return { kind: 'scripted' };
  const model = parseModelSpec(text);
  if (model) return { kind: 'model', model };
  throw new FactoryError('usage', `--user "${text}" is not a user simulator`, { fix: `use scripted (the task's facts), ${MODEL_SPEC_EXAMPLES}` });
}

/** A model playing the user, checked: `<provider>:<model>`, its server's facts, and how to build one per episode. */
export interface PreparedUser {
  user: string;
  checked: CheckedModel;
  factory: UserFactory;
}

export interface UserModelOptions extends ModelServerOptions {
  /** openai: stream answers (default true). */
  stream?: boolean;
}

/** The user for a run: undefined for the scripted user, or a model checked now, before any episode or file. */
export async function prepareUser(lane: Lane, spec: UserSpec, options: UserModelOptions = {}): Promise<PreparedUser | undefined> {
  if (spec.kind === 'scripted') return undefined;
  if (!lane.document.tasks.some((task) => task.facts?.length)) {
    throw new FactoryError('usage', `--user ${formatModelSpec(spec.model)}: no task of lane ${lane.name} declares facts, so no user simulator ever runs`, {
      fix: 'drop --user, or use a lane whose tasks have "facts" (e.g. issues-dialogue-v1)',
    });
  }
  const checked = await checkModel(spec.model, { flag: '--user', ...options });
  const temperature = lane.document.model?.temperature ?? 0.2;
  const maxTokens = lane.document.model?.max_output_tokens ?? 512;
  if (checked.provider === 'ollama') {
    const settings: UserModelSettings = { temperature, num_predict: maxTokens };
    return {
      user: formatModelSpec(spec.model),
      checked,
      factory: (request) => createOllamaUser(checked.info, settings, request.random, request.brief, { timeoutMs: checked.timeoutMs }),
    };
  }
  const settings = { temperature, max_tokens: maxTokens, stream: options.stream ?? true };
  return {
    user: formatModelSpec(spec.model),
    checked,
    factory: (request) => new OpenAIUser(checked.model, settings, checked.connection, request.brief, request.random),
  };
}
