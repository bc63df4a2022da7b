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
//   batch_reads         makes a solution's parallel group of independent reads in one
//                       turn (every other variant makes them one per turn), and retries
//                       the calls of a group that failed transiently
//   guess_then_corrected  does not ask the user for a withheld fact: acts on a guess
//                       instead (the task's guess script), and goes on once corrected
//   asks_too_often      also asks for a fact the user already told it
//
// A solution's ask step says the fact's question as text; the user simulator
// answers and the script goes on. An answer step in the middle of a script
// (a guess's) is said the same way.
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
import { expectationMet } from '../solutions/read-expectation.js';
import type { ScriptedVariant, ScriptRead, ScriptStep } from '../solutions/solution-script.js';
import { findRenamed } from './renamed-tools.js';


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
const STOPPED = 'I cannot go on with this task.';
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
  /** What the dialogue variants play: a guess instead of the first question, or a question about a fact already told. */
  dialogue?: { guess?: readonly ScriptStep[]; told_question?: string };
}

type GroupCall = Extract<ScriptStep, { parallel: unknown }>['parallel'][number];

/** A parallel group in flight: each call, whether it is done, and which calls the last turn sent. */
interface Batch {
  calls: { call: GroupCall; arguments: JsonObject; attempts: number; done: boolean }[];
  sent: number[];
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
  private batch: Batch | undefined;
  private stopped = false;

  constructor(options: ScriptedPolicyOptions) {
    this.script = playedScript(options.script, options.variant, options.dialogue);
    this.variant = options.variant;
    this.random = options.random;
    this.mistakePending = options.variant === 'wrong_type_first' || options.variant === 'repair_arguments';
    this.actor = { role: 'policy', kind: 'scripted', name: 'scripted-solution', version: '2', variant: options.variant };
  }

  async next(observation: Observation, _signal?: AbortSignal): Promise<Action> {
    // Once it has given up it stays given up, whatever the user says next.
    if (this.stopped) return { kind: 'final_text', text: STOPPED };
    this.firstObservation ??= observation;
    const last = observation.messages[observation.messages.length - 1];
    try {
      if (this.batch && last?.role === 'tool') return this.onBatchResults(observation);
      if (this.pending && last?.role === 'tool') return this.onResult(interpret(last), observation);
      return this.advance(observation);
    } catch (error) {
      // A script that cannot go on (a result it needs never arrived) ends honestly.
      if (error instanceof TemplateError) {
        return this.giveUp('I could not finish the task: I never got a result I needed to go on.');
      }
      throw error;
    }
  }

  private get step(): Extract<ScriptStep, { call: string }> {
    return this.script[this.stepIndex] as Extract<ScriptStep, { call: string }>;
  }

  private advance(observation: Observation): Action {
    this.pending = undefined;
    this.batch = undefined;
    const step = this.script[this.stepIndex];
    if (!step) return { kind: 'final_text', text: 'Done.' };
    // Said as text; should the user reply, the script goes on from the next step.
    if ('answer' in step) {
      this.stepIndex++;
      return { kind: 'final_text', text: renderString(step.answer, this.results) };
    }
    if ('ask' in step) {
      this.stepIndex++;
      return { kind: 'final_text', text: step.question };
    }
    if ('parallel' in step) {
      this.batch = { calls: step.parallel.map((call) => ({ call, arguments: renderDeep(call.arguments, this.results) as JsonObject, attempts: 0, done: false })), sent: [] };
      return this.sendBatch();
    }
    const readsFirst = this.variant === 'precondition_first' || this.variant === 'verify_after_write';
    return this.issue(readsFirst && (step as { before?: ScriptRead }).before ? 'before' : 'main', observation);
  }

  private giveUp(text: string): Action {
    this.stopped = true;
    return { kind: 'final_text', text };
  }

  /** Sends every call of the batch not yet done, in one turn (one call alone is a plain call). */
  private sendBatch(text?: string): Action {
    const batch = this.batch!;
    batch.sent = batch.calls.flatMap((entry, index) => (entry.done ? [] : [index]));
    const calls = batch.sent.map((index) => {
      const entry = batch.calls[index]!;
      entry.attempts++;
      return { name: this.toolName(entry.call.call), arguments: entry.arguments };
    });
    const extra = text ? { text } : {};
    return calls.length === 1 ? { kind: 'tool_call', ...calls[0]!, ...extra } : { kind: 'tool_calls', calls, ...extra };
  }

  /** The results of a batch's turn, matched to its calls by tool_call_id. */
  private onBatchResults(observation: Observation): Action {
    const batch = this.batch!;
    const { messages } = observation;
    let turn = messages.length - 1;
    while (turn >= 0 && messages[turn]!.role === 'tool') turn--;
    const assistant = messages[turn];
    const ids = assistant?.role === 'assistant' ? (assistant.tool_calls ?? []).map((call) => call.id) : [];
    const failures: string[] = [];
    for (const [position, index] of batch.sent.entries()) {
      const entry = batch.calls[index]!;
      const answer = messages.slice(turn + 1).find((message): message is ToolMessage => message.role === 'tool' && message.tool_call_id === ids[position]);
      const outcome: Outcome = answer ? interpret(answer) : { ok: false, kind: 'tool_error', text: '', error: 'no result' };
      if (outcome.ok) {
        entry.done = true;
        if (entry.call.as) this.results[entry.call.as] = outcome.value;
        continue;
      }
      if (!RETRYABLE.has(outcome.kind) || entry.attempts >= MAX_RETRY_ATTEMPTS) {
        return this.giveUp(`I could not finish the task: ${entry.call.call} failed (${outcome.error}).`);
      }
      failures.push(`${entry.call.call} failed (${outcome.error})`);
    }
    if (failures.length === 0) {
      this.stepIndex++;
      return this.advance(observation);
    }
    return this.sendBatch(`${failures.join('; ')}; trying again.`);
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
        return this.giveUp(`I made the change with ${step.call}, but reading it back does not show it, so I cannot confirm it worked.`);
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
      return this.giveUp(`Sorry, I have to stop here: ${tool} failed (${outcome.error}). I have not made any further changes.`);
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
    return this.giveUp(`I could not finish the task: ${tool} failed (${outcome.error}).`);
  }
}

/**
 * The script a variant plays: the dialogue variants' changes made, and
 * parallel groups unrolled into one call per turn for every variant but
 * batch_reads.
 */
function playedScript(script: readonly ScriptStep[], variant: ScriptedVariant, dialogue: ScriptedPolicyOptions['dialogue']): ScriptStep[] {
  let steps = [...script];
  const firstAsk = steps.findIndex((step) => 'ask' in step);
  if (variant === 'guess_then_corrected' && dialogue?.guess && firstAsk >= 0) {
    steps.splice(firstAsk, 1, ...dialogue.guess);
  } else if (variant === 'asks_too_often' && dialogue?.told_question && firstAsk >= 0) {
    steps.splice(firstAsk, 0, { ask: 'told', question: dialogue.told_question });
  }
  if (variant !== 'batch_reads') {
    steps = steps.flatMap((step): ScriptStep[] => ('parallel' in step ? step.parallel.map((call) => ({ ...call })) : [step]));
  }
  return steps;
}

/** The start of a JSON object or array ("[FILE] notes.txt" is prose, `[{"a"` is JSON). */
const LOOKS_LIKE_JSON = /^\s*(?:\{\s*["}]|\[\s*(?:["{[\]\-0-9]|true|false|null))/;

/** A successful result as a script binds it (`as`): parsed JSON, or { text } for prose; undefined when it looks cut short. */
export function boundResult(content: string): JsonValue | undefined {
  if (!LOOKS_LIKE_JSON.test(content)) return { text: content };
  try {
    return JSON.parse(content) as JsonValue;
  } catch {
    return undefined;
  }
}

function interpret(message: ToolMessage): Outcome {
  const error = message.tool_result.error ?? message.content;
  if (!message.tool_result.ok) return { ok: false, kind: message.tool_result.kind ?? 'tool_error', text: message.content, error };
  // Third-party servers answer in prose (server-filesystem: the file's text, "Successfully wrote to …";
  // server-memory: "Entities deleted successfully"):
  // a result that does not even start like JSON is bound as { text }. One that starts like JSON and
  // does not parse was cut short.
  const value = boundResult(message.content);
  return value === undefined ? { ok: false, kind: 'unreadable', text: message.content, error: 'the result could not be read; it looks cut short' } : { ok: true, value };
}

function isUnknownTool(outcome: Extract<Outcome, { ok: false }>): boolean {
  return outcome.kind === 'unknown_tool' || /unknown tool/i.test(outcome.error);
}

function isInvalidArguments(outcome: Extract<Outcome, { ok: false }>): boolean {
  return outcome.kind === 'invalid_arguments' || /invalid arguments|invalid params|-32602/i.test(outcome.error);
}
