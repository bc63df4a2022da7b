// Owns choosing who plays the user of tasks that declare facts: the scripted
// user by default, or `--user ollama:<model>`, a local model checked before
// anything is written (Ollama answers, the model is pulled, its digest is
// readable), as for a model policy.

import { FactoryError } from '../core/errors.js';
import { resolveOllamaHost } from '../core/ollama-host.js';
import type { Lane } from '../lanes/lane.js';
import { DEFAULT_MODEL_TIMEOUT_MS } from '../policy/ollama/model-server-fetch.js';
import { inspectModel, STARTUP_CHECK_TIMEOUT_MS, type ModelInfo } from '../policy/ollama/ollama-model.js';
import { createOllamaUser, type UserModelSettings } from '../policy/ollama/ollama-user.js';
import type { UserFactory } from '../verify/episode-production.js';

export type UserSpec = { kind: 'scripted' } | { kind: 'ollama'; model: string };

export function parseUserSpec(text: string): UserSpec {
  if (text === 'scripted') return { kind: 'scripted' };
  const match = /^ollama:(.+)$/.exec(text);
  if (match && match[1]!.trim()) return { kind: 'ollama', model: match[1]!.trim() };
  throw new FactoryError('usage', `--user "${text}" is not a user simulator`, { fix: 'use scripted (the task\'s facts), or ollama:<model> (e.g. ollama:qwen2.5:1.5b)' });
}

/** A model playing the user, checked: `ollama:<model>`, its server's facts, and how to build one per episode. */
export interface PreparedUser {
  user: string;
  info: ModelInfo;
  factory: UserFactory;
}

export interface UserModelOptions {
  host?: string;
  /** The longest the model server may stay silent on one request, in milliseconds. */
  timeoutMs?: number;
}

/** The user for a run: undefined for the scripted user, or a model checked now, before any episode or file. */
export async function prepareUser(lane: Lane, spec: UserSpec, options: UserModelOptions = {}): Promise<PreparedUser | undefined> {
  if (spec.kind === 'scripted') return undefined;
  if (!lane.document.tasks.some((task) => task.facts?.length)) {
    throw new FactoryError('usage', `--user ${spec.kind}:${spec.model}: no task of lane ${lane.name} declares facts, so no user simulator ever runs`, {
      fix: 'drop --user, or use a lane whose tasks have "facts" (e.g. issues-dialogue-v1)',
    });
  }
  const timeoutMs = options.timeoutMs ?? DEFAULT_MODEL_TIMEOUT_MS;
  const info = await inspectModel(resolveOllamaHost(options.host), spec.model, { timeoutMs: Math.min(timeoutMs, STARTUP_CHECK_TIMEOUT_MS) });
  const settings: UserModelSettings = { temperature: lane.document.model?.temperature ?? 0.2, num_predict: lane.document.model?.max_output_tokens ?? 512 };
  return {
    user: `ollama:${spec.model}`,
    info,
    factory: (request) => createOllamaUser(info, settings, request.random, request.brief, { timeoutMs }),
  };
}
