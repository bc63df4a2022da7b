// Owns choosing who plays the user of tasks that declare facts: the scripted
// user by default, or `--user <provider>:<model>`, a chat model checked
// before anything is written by its provider, as for a model policy.

import { FactoryError } from '../core/errors.js';
import type { Lane } from '../lanes/lane.js';
import type { ChatModel } from '../models/chat-model.js';
import { checkModel, formatModelSpec, MODEL_SPEC_EXAMPLES, parseModelSpec, type ModelServerOptions, type ModelSpec } from '../models/model-registry.js';
import { ModelUser, type UserModelSettings } from '../policy/model-user.js';
import type { UserFactory } from '../verify/episode-production.js';

export type UserSpec = { kind: 'scripted' } | { kind: 'model'; model: ModelSpec };

export function parseUserSpec(text: string): UserSpec {
  if (text === 'scripted') return { kind: 'scripted' };
  const model = parseModelSpec(text);
  if (model) return { kind: 'model', model };
  throw new FactoryError('usage', `--user "${text}" is not a user simulator`, { fix: `use scripted (the task's facts), ${MODEL_SPEC_EXAMPLES}` });
}

/** A model playing the user, checked: `<provider>:<model>`, the model, and how to build one per episode. */
export interface PreparedUser {
  user: string;
  checked: ChatModel;
  factory: UserFactory;
}

/** The user for a run: undefined for the scripted user, or a model checked now, before any episode or file. */
export async function prepareUser(lane: Lane, spec: UserSpec, options: ModelServerOptions = {}): Promise<PreparedUser | undefined> {
  if (spec.kind === 'scripted') return undefined;
  if (!lane.document.tasks.some((task) => task.facts?.length)) {
    throw new FactoryError('usage', `--user ${formatModelSpec(spec.model)}: no task of lane ${lane.name} declares facts, so no user simulator ever runs`, {
      fix: 'drop --user, or use a lane whose tasks have "facts" (e.g. issues-dialogue-v1)',
    });
  }
  const checked = await checkModel(spec.model, { flag: '--user', ...options });
  const settings: UserModelSettings = { temperature: lane.document.model?.temperature ?? 0.2, maxTokens: lane.document.model?.max_output_tokens ?? 512 };
  return {
    user: formatModelSpec(spec.model),
    checked,
    factory: (request) => new ModelUser(checked, settings, request.brief, request.random),
  };
}
