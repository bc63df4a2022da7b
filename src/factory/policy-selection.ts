// Owns choosing the policy that drives a lane's episodes. Scripted lanes play
// each task's solution in the variant the seed drew; the policy's own choices
// (which argument to get wrong) come from its own substream.

import type { Lane } from '../lanes/lane.js';
import { ScriptedPolicy, type ScriptedVariant } from '../policy/scripted-policy.js';
import type { PolicyFactory } from '../verify/episode-production.js';

export function policyFactoryFor(lane: Lane): PolicyFactory {
  switch (lane.document.policy.kind) {
    case 'scripted':
      return (request) =>
        new ScriptedPolicy({
          script: request.script,
          variant: request.variant as ScriptedVariant,
          random: request.random,
        });
  }
}
