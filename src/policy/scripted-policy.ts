// Owns the scripted policy: it plays a task's solution script step by step,
// filling `{{name.path}}` references from the results it has been shown, and in
// the `wrong_type_first` variant makes one realistic argument mistake first,
// reads the error and repairs it. It sees only the observation.

import type { ToolMessage } from '../core/conversation.js';
import type { JsonObject } from '../core/json-value.js';
import type { Random } from '../core/random.js';
import { renderDeep, renderString } from '../core/template.js';
import { corruptArguments, type Corruption } from './argument-corruption.js';
import type { Action, Observation, Policy } from './policy-contract.js';

export type ScriptStep = { call: string; arguments: JsonObject; as?: string } | { answer: string };

export const SCRIPTED_VARIANTS = ['clean', 'wrong_type_first'] as const;
export type ScriptedVariant = (typeof SCRIPTED_VARIANTS)[number];

export interface ScriptedPolicyOptions {
  script: readonly ScriptStep[];
  variant: ScriptedVariant;
  /** Draws which argument to get wrong; unused by `clean`. */
  random: Random;
}

export class ScriptedPolicy implements Policy {
  readonly actor;
  private readonly script: readonly ScriptStep[];
  private readonly random: Random;
  private readonly results: Record<string, unknown> = {};
  private stepIndex = 0;
  private mistakePending: boolean;
  private awaiting: { intended: Action & { kind: 'tool_call' }; corruption?: Corruption } | undefined;

  constructor(options: ScriptedPolicyOptions) {
    this.script = options.script;
    this.random = options.random;
    this.mistakePending = options.variant === 'wrong_type_first';
    this.actor = { role: 'policy', kind: 'scripted', name: 'scripted-solution', version: '1', variant: options.variant };
  }

  async next(observation: Observation, _signal?: AbortSignal): Promise<Action> {
    const last = observation.messages[observation.messages.length - 1];
    if (this.awaiting && last?.role === 'tool') {
      const { intended, corruption } = this.awaiting;
      this.awaiting = undefined;
      if (last.tool_result.ok) {
        this.remember(last);
      } else if (corruption) {
        // The error names what was wrong; the repair is the intended call.
        this.awaiting = { intended };
        return intended;
      } else {
        return { kind: 'final_text', text: `I could not finish the task: ${last.name ?? 'the tool'} failed (${last.tool_result.error ?? 'unknown error'}).` };
      }
    }
    return this.playStep(observation);
  }

  private remember(message: ToolMessage): void {
    const step = this.script[this.stepIndex];
    this.stepIndex++;
    if (step && 'call' in step && step.as) this.results[step.as] = parseContent(message.content);
  }

  private playStep(observation: Observation): Action {
    const step = this.script[this.stepIndex];
    if (!step) return { kind: 'final_text', text: 'Done.' };
    if ('answer' in step) return { kind: 'final_text', text: renderString(step.answer, this.results) };
    const intended: Action & { kind: 'tool_call' } = {
      kind: 'tool_call',
      name: step.call,
      arguments: renderDeep(step.arguments, this.results),
    };
    if (this.mistakePending) {
      const tool = observation.tools.find((candidate) => candidate.name === step.call);
      const corruption = corruptArguments(tool, intended.arguments, this.random);
      if (corruption) {
        this.mistakePending = false;
        this.awaiting = { intended, corruption };
        return { kind: 'tool_call', name: step.call, arguments: corruption.arguments };
      }
    }
    this.awaiting = { intended };
    return intended;
  }
}

function parseContent(content: string): unknown {
  try {
    return JSON.parse(content);
  } catch {
    return content;
  }
}
