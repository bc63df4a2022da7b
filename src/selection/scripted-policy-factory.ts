// Owns the policy factory of a scripted lane: each task's solution played in
// the variant the seed drew. Kept apart from model selection so that a
// generation worker thread loads no model client it will never use.

import type { Lane } from '../lanes/lane.js';
import { ScriptedPolicy } from '../policy/scripted-policy.js';
import type { ScriptedVariant } from '../solutions/solution-script.js';
import type { PolicyFactory } from '../verify/episode-production.js';

export function policyFactoryFor(lane: Lane): PolicyFactory {
  switch (lane.document.policy.kind) {
    case 'scripted':
      return (request) =>
        new ScriptedPolicy({ script: request.script, variant: request.variant as ScriptedVariant, random: request.random, ...(request.dialogue ? { dialogue: request.dialogue } : {}) });
  }
}
