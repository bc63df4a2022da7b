// Owns the scripted policy: it plays a task's solution script step by step,
// filling `{{name.path}}` references from the results it has been shown, and
// behaves on errors according to its variant:
//
//   clean               plays the script; on any failure, says it could not finish
//   wrong_type_first    gets one argument wrong first, reads the error, re-sends the intended call
//   repair_arguments    gets two arguments wrong first and fixes exactly the fields the error names
//   retry_on_transient  retries a failed call up to 3 attempts, with a growing backoff
//   precondition_first  reads what it is about to change before each write
//   verify_after_write  reads before and back after each write, re-reads a stale view,
//                       and checks an ambiguous write failure before repeating the write
//   give_up_on_fault    apologises and stops at the first failure (the task fails)
//
// Every variant but clean, wrong_type_first and give_up_on_fault also finds a
// tool again after the server renames it. The policy sees only the
// observation: messages and the tool catalog.

import type { ToolMessage } from '../core/conversation.js';
import type { JsonObject, JsonValue } from '../core/json-value.js';
import type { Random } from '../core/random.js';
import { renderDeep, renderString, TemplateError } from '../core/template.js';
import { corruptArguments, type Corruption } from './argument-corruption.js';
import { repairArguments } from './argument-repair.js';
import type { Action, Observation, Policy, ToolCallAction } from './policy-contract.js';
import { expectationMet, type ReadExpectation } from './read-expectation.js';
import { findRenamed } from './renamed-tools.js';

export interface ScriptRead {
  call: string;
  arguments: JsonObject;
  expect?: ReadExpectation;
}

export type ScriptStep =
  | { call: string; arguments: JsonObject; as?: string; before?: ScriptRead; after?: ScriptRead & { expect: ReadExpectation } }
  | { parallel: { call: string; arguments: JsonObject; as?: string }[] }
  /** A question to the user about a fact: `question` is the rendered text the agent says. */
  | { ask: string; question: string }
  | { answer: string };

export const SCRIPTED_VARIANTS = [
  'clean',
  'wrong_type_first',
  'repair_arguments',
  'retry_on_transient',
  'precondition_first',
  'verify_after_write',
  'give_up_on_fault',
] as const;
export type ScriptedVariant = (typeof SCRIPTED_VARIANTS)[number];

const FINDS_RENAMED_TOOLS: ReadonlySet<ScriptedVariant> = new Set([
  'repair_arguments',
  'retry_on_transient',
  'precondition_first',
  'verify_after_write',
]);
const RETRYABLE = new Set(['tool_error', 'jsonrpc_error', 'timeout', 'transport_error', 'invalid_result', 'result_too_large', 'unreadable']);
/** A failed write that may nevertheless have happened. */
const AMBIGUOUS = new Set(['timeout', 'transport_error', 'invalid_result', 'result_too_large', 'unreadable']);
const MAX_RETRY_ATTEMPTS = 3;
const MAX_REREADS = 2;
const BACKOFF_BASE_MS = 10;

type Phase = 'before' | 'main' | 'after' | 'check';

interface Pending {
  phase: Phase;
  /** The call as the script means it (original tool name, correct arguments). */
  intended: { name: string; arguments: JsonObject };
  /** The arguments actually sent last time. */
  issued: JsonObject;
  attempts: number;
  corruption?: Corruption;
  rereads: number;
}

type Outcome = { ok: true; value: unknown } | { ok: false; kind: string; text: string; error: string };

export interface ScriptedPolicyOptions {
  script: readonly ScriptStep[];
  variant: ScriptedVariant;
  /** The policy's own choices (which argument to get wrong); unused by most variants. */
  random: Random;
}

export class ScriptedPolicy implements Policy {
  readonly actor;
  private readonly script: readonly ScriptStep[];
  private readonly variant: ScriptedVariant;
  private readonly random: Random;
  private readonly results: Record<string, unknown> = {};
  private readonly aliases = new Map<string, string>();
  /** The first turn's observation; its catalog is read only if a tool goes missing. */
  private firstObservation: Observation | undefined;
  private stepIndex = 0;
  private mistakePending: boolean;
  private pending: Pending | undefined;

  constructor(options: ScriptedPolicyOptions) {
    this.script = options.script;
    this.variant = options.variant;
    this.random = options.random;
    this.mistakePending = options.variant === 'wrong_type_first' || options.variant === 'repair_arguments';
    this.actor = { role: 'policy', kind: 'scripted', name: 'scripted-solution', version: '2', variant: options.variant };
  }

  async next(observation: Observation, _signal?: AbortSignal): Promise<Action> {
    this.firstObservation ??= observation;
    const last = observation.messages[observation.messages.length - 1];
    try {
      if (this.pending && last?.role === 'tool') return this.onResult(interpret(last), observation);
      return this.advance(observation);
    } catch (error) {
      // A script that cannot go on (a result it needs never arrived) ends honestly.
      if (error instanceof TemplateError) {
        return { kind: 'final_text', text: 'I could not finish the task: I never got a result I needed to go on.' };
      }
      throw error;
    }
  }

  private get step(): Extract<ScriptStep, { call: string }> {
    return this.script[this.stepIndex] as Extract<ScriptStep, { call: string }>;
  }

  private advance(observation: Observation): Action {
    this.pending = undefined;
    const step = this.script[this.stepIndex];
    if (!step) return { kind: 'final_text', text: 'Done.' };
    if ('answer' in step) return { kind: 'final_text', text: renderString(step.answer, this.results) };
    const readsFirst = this.variant === 'precondition_first' || this.variant === 'verify_after_write';
    return this.issue(readsFirst && (step as { before?: ScriptRead }).before ? 'before' : 'main', observation);
  }

  private issue(phase: Phase, observation: Observation): ToolCallAction {
    const step = this.step;
    const spec = phase === 'before' ? step.before! : phase === 'main' ? step : step.after!;
    const intended = { name: spec.call, arguments: renderDeep(spec.arguments, this.results) as JsonObject };
    let issued = intended.arguments;
    let corruption: Corruption | undefined;
    if (this.mistakePending) {
      const tool = observation.tools.find((candidate) => candidate.name === this.toolName(intended.name));
      corruption = corruptArguments(tool, intended.arguments, this.random, this.variant === 'repair_arguments' ? 2 : 1);
      if (corruption) {
        this.mistakePending = false;
        issued = corruption.arguments;
      }
    }
    this.pending = { phase, intended, issued, attempts: 1, rereads: 0, ...(corruption ? { corruption } : {}) };
    return { kind: 'tool_call', name: this.toolName(intended.name), arguments: issued };
  }

  private reissue(args: JsonObject, extra: Partial<ToolCallAction> = {}): ToolCallAction {
    const pending = this.pending!;
    pending.issued = args;
    pending.attempts++;
    delete pending.corruption;
    return { kind: 'tool_call', name: this.toolName(pending.intended.name), arguments: args, ...extra };
  }

  private toolName(name: string): string {
    return this.aliases.get(name) ?? name;
  }

  private onResult(outcome: Outcome, observation: Observation): Action {
    const pending = this.pending!;
    const step = this.step;
    if (!outcome.ok) return this.recover(outcome, observation);
    switch (pending.phase) {
      case 'before':
        return this.issue('main', observation);
      case 'main':
        if (step.as) this.results[step.as] = outcome.value;
        if (this.variant === 'verify_after_write' && step.after) return this.issue('after', observation);
        this.stepIndex++;
        return this.advance(observation);
      case 'check':
      case 'after': {
        const expectation = step.after!.expect;
        if (expectationMet(outcome.value, expectation)) {
          // The read-back stands in for a write result that was lost on the way.
          if (pending.phase === 'check' && step.as) this.results[step.as] = outcome.value;
          this.stepIndex++;
          return this.advance(observation);
        }
        if (pending.phase === 'check') {
          // The failed write did not happen after all: do it again.
          this.pending = { phase: 'main', intended: { name: step.call, arguments: renderDeep(step.arguments, this.results) as JsonObject }, issued: {}, attempts: 1, rereads: 0 };
          return this.reissue(this.pending.intended.arguments, { text: 'The change is not there, so I will make it again.' });
        }
        if (pending.rereads < MAX_REREADS) {
          pending.rereads++;
          return this.reissue(pending.intended.arguments, { text: 'The change does not show yet; reading it again.' });
        }
        return { kind: 'final_text', text: `I made the change with ${step.call}, but reading it back does not show it, so I cannot confirm it worked.` };
      }
    }
  }

  private recover(outcome: Extract<Outcome, { ok: false }>, observation: Observation): Action {
    const pending = this.pending!;
    const tool = this.toolName(pending.intended.name);
    if (pending.corruption) {
      if (this.variant === 'repair_arguments') {
        const repaired = repairArguments(pending.issued, pending.intended.arguments, outcome.text);
        return this.reissue(repaired.arguments, { text: `Fixing ${repaired.fields.join(' and ') || 'the arguments'} as the error says.` });
      }
      return this.reissue(pending.intended.arguments);
    }
    if (this.variant === 'give_up_on_fault') {
      return { kind: 'final_text', text: `Sorry, I have to stop here: ${tool} failed (${outcome.error}). I have not made any further changes.` };
    }
    if (FINDS_RENAMED_TOOLS.has(this.variant) && isUnknownTool(outcome)) {
      const original = this.firstObservation?.tools.find((candidate) => candidate.name === pending.intended.name);
      const twin = findRenamed(original, observation.tools);
      if (twin && this.aliases.get(pending.intended.name) !== twin.name) {
        this.aliases.set(pending.intended.name, twin.name);
        return this.reissue(pending.issued, { text: `${pending.intended.name} is no longer available; ${twin.name} does the same thing.` });
      }
    }
    switch (this.variant) {
      case 'retry_on_transient':
        if (RETRYABLE.has(outcome.kind) && pending.attempts < MAX_RETRY_ATTEMPTS) {
          const backoff = BACKOFF_BASE_MS * 2 ** (pending.attempts - 1);
          return this.reissue(pending.issued, {
            text: `${tool} failed (${outcome.error}); retrying in ${backoff} ms (attempt ${pending.attempts + 1} of ${MAX_RETRY_ATTEMPTS}).`,
            backoff_ms: backoff,
          });
        }
        break;
      case 'repair_arguments':
        if (isInvalidArguments(outcome) && pending.attempts < MAX_RETRY_ATTEMPTS) {
          const repaired = repairArguments(pending.issued, pending.intended.arguments, outcome.text);
          return this.reissue(repaired.arguments, { text: `Fixing ${repaired.fields.join(' and ') || 'the arguments'} as the error says.` });
        }
        if (RETRYABLE.has(outcome.kind) && pending.attempts < 2) return this.reissue(pending.issued, { text: `${tool} failed (${outcome.error}); trying once more.` });
        break;
      case 'verify_after_write': {
        const step = this.step;
        if (pending.phase === 'main' && step.after && AMBIGUOUS.has(outcome.kind)) {
          const check: Pending = {
            phase: 'check',
            intended: { name: step.after.call, arguments: renderDeep(step.after.arguments, this.results) as JsonObject },
            issued: {},
            attempts: 0,
            rereads: 0,
          };
          this.pending = check;
          return this.reissue(check.intended.arguments, { text: `${tool} failed (${outcome.error}); checking whether the change was made before trying again.` });
        }
        if (RETRYABLE.has(outcome.kind) && pending.attempts < 2) return this.reissue(pending.issued, { text: `${tool} failed (${outcome.error}); trying once more.` });
        break;
      }
      case 'precondition_first':
        if (RETRYABLE.has(outcome.kind) && pending.attempts < 2) return this.reissue(pending.issued, { text: `${tool} failed (${outcome.error}); trying once more.` });
        break;
      default:
        break;
    }
    return { kind: 'final_text', text: `I could not finish the task: ${tool} failed (${outcome.error}).` };
  }
}

function interpret(message: ToolMessage): Outcome {
  const error = message.tool_result.error ?? message.content;
  if (!message.tool_result.ok) return { ok: false, kind: message.tool_result.kind ?? 'tool_error', text: message.content, error };
  try {
    return { ok: true, value: JSON.parse(message.content) as JsonValue };
  } catch {
    return { ok: false, kind: 'unreadable', text: message.content, error: 'the result could not be read; it looks cut short' };
  }
}

function isUnknownTool(outcome: Extract<Outcome, { ok: false }>): boolean {
  return outcome.kind === 'unknown_tool' || /unknown tool/i.test(outcome.error);
}

function isInvalidArguments(outcome: Extract<Outcome, { ok: false }>): boolean {
  return outcome.kind === 'invalid_arguments' || /invalid arguments|invalid params|-32602/i.test(outcome.error);
}
