// Owns choosing who plays the user of tasks that declare facts: the scripted
// user by default, or `--user ollama:<model>`, a local model checked before
// anything is written (Ollama answers, the model is pulled, its digest is
// readable), as for a model policy.

import { FactoryError } from '../core/errors.js';
import type { ModelInfo } from '../policy/ollama/ollama-model.js';
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
