// Owns the agent loop: one explicit state machine that moves an episode
// through model turn → parse action → validate → execute → reinject → (model
// turn | finished). A turn of several calls validates, executes and reinjects
// each in the order given, one tool message per call. A text turn goes to the
// user simulator, when the task has one: its reply is a user message and the
// agent goes on; otherwise the text is the final answer. Limits are checked at
// these boundaries only. Raw policy
// output is never executable: only arguments that pass the tool's schema reach
// the tool, and a rejected call is reinjected as an `ok: false` result the
// policy may repair. A policy whose infrastructure failed (a model server
// that errs, drops or hangs) did not behave: the loop stops and throws that
// error on, so the episode never becomes a record.

import type { AssistantMessage, Message, ToolCall, ToolDescriptor, ToolErrorKind, ToolMessage } from '../core/conversation.js';
import { copyPlain } from '../core/json-copy.js';
import type { JsonObject } from '../core/json-value.js';
import { compileValidator, formatFieldErrors, type FieldError, type Validator } from '../core/schema-validator.js';
import { InfrastructureError, type Action, type Observation, type Policy, type ToolCallRequest } from '../policy/policy-contract.js';
import type { UserSimulator } from '../policy/user-simulator.js';
import type { Limits } from './limits.js';
import type { ToolSession } from './tool-session.js';
import { NULL_TRACE, type TraceSink } from './trace.js';

export type OutcomeKind = 'final_answer' | 'step_limit' | 'tool_call_limit' | 'wall_time_limit' | 'policy_error';

export interface Outcome {
  kind: OutcomeKind;
  detail?: string;
}

export interface RunStats {
  /** Model turns taken. */
  steps: number;
  /** Calls that reached a tool. */
  tool_calls: number;
  /** Calls stopped before a tool: malformed, unknown tool, invalid arguments, over the limit. */
  rejected_calls: number;
  /** Tool messages with ok:false, whatever their cause. */
  error_turns: number;
  /** Replies the user simulator gave. */
  user_turns: number;
}

/** The catalog changed mid-episode (a tool renamed or removed); applied before the message at `before_message`. */
export interface CatalogUpdate {
  before_message: number;
  removed: string[];
  added: ToolDescriptor[];
}

export interface AgentRun {
  messages: Message[];
  outcome: Outcome;
  stats: RunStats;
  final_text: string | null;
  catalog_updates: CatalogUpdate[];
}

export interface AgentLoopOptions {
  policy: Policy;
  /** Answers the agent's text turns; without one, the first text turn is the final answer. */
  user?: UserSimulator;
  tools: ToolSession;
  /** The conversation so far: normally the system and user messages. */
  messages: readonly Message[];
  limits: Limits;
  trace?: TraceSink;
  /** Milliseconds; injectable so tests can drive the wall-time limit. */
  clock?: () => number;
  /** Cancels in-flight tool calls (the client sends notifications/cancelled). */
  signal?: AbortSignal;
  /** False for replay: wall time is not replayable, so replay never reads the clock for limits. */
  enforceWallTime?: boolean;
  /** For replay of an episode that ran out of wall time: stop exactly where it stopped. */
  halt?: WallTimeHalt;
}

/** Where an episode ran out of wall time, as its record shows it. */
export type WallTimeHalt =
  | { before_executing: string }
  | { before_turn: number }
  | { during_turn: number }
  | { during_user_turn: number };

type State =
  | { at: 'model_turn' }
  | { at: 'parse_action'; action: Action }
  | { at: 'validate'; call: ToolCall }
  | { at: 'execute'; call: ToolCall; args: JsonObject }
  | { at: 'reinject'; message: ToolMessage; then?: Outcome }
  | { at: 'user_turn' }
  | { at: 'finished'; outcome: Outcome };

class WallTimeExceeded extends Error {}

export const MODEL_TURN_PAST_WALL_TIME = (limit: number) => `model turn ran past wall_time_ms (${limit})`;
export const WALL_TIME_EXCEEDED = (limit: number) => `exceeded wall_time_ms (${limit})`;
export const USER_TURN_PAST_WALL_TIME = (limit: number) => `user turn ran past wall_time_ms (${limit})`;

export async function runAgentLoop(options: AgentLoopOptions): Promise<AgentRun> {
  const { policy, tools, limits } = options;
  const trace = options.trace ?? NULL_TRACE;
  const clock = options.clock ?? (() => performance.now());
  const enforceWallTime = options.enforceWallTime !== false;
  const deadline = enforceWallTime ? clock() + limits.wall_time_ms : Number.POSITIVE_INFINITY;
  const wallTimeDetail = WALL_TIME_EXCEEDED(limits.wall_time_ms);

  const messages: Message[] = [...options.messages];
  const validatorsFor = (catalog: readonly ToolDescriptor[]) => new Map<string, Validator>(catalog.map((tool) => [tool.name, compileValidator(tool.input_schema)]));
  let validators = validatorsFor(tools.catalog);
  const catalogUpdates: CatalogUpdate[] = [];
  const stats: RunStats = { steps: 0, tool_calls: 0, rejected_calls: 0, error_turns: 0, user_turns: 0 };
  let finalText: string | null = null;
  let callCounter = 0;
  /** The calls of the current turn not yet validated, in the order the policy gave them. */
  let queued: ToolCall[] = [];
  /** Set once a call of this turn met the tool-call limit: the rest of the turn is refused and the episode ends. */
  let limitOutcome: Outcome | undefined;

  const reject = (call: ToolCall | null, kind: ToolErrorKind, error: string, errors?: FieldError[]): State => {
    stats.rejected_calls++;
    trace.emit('call_rejected', { call_id: call?.id ?? null, tool: call?.name ?? null, kind, error, ...(errors ? { errors: errors as unknown as JsonObject[] } : {}) });
    const body: JsonObject = { ok: false, kind, error };
    if (errors) body.errors = errors as unknown as JsonObject[];
    return {
      at: 'reinject',
      message: {
        role: 'tool',
        tool_call_id: call?.id ?? null,
        name: call?.name ?? null,
        content: JSON.stringify(body),
        tool_result: { ok: false, kind, error, ...(errors ? { errors } : {}) },
      },
    };
  };

  let state: State = { at: 'model_turn' };
  trace.emit('loop_started', { limits: { ...limits }, tools: tools.catalog.map((tool) => tool.name), messages: messages.length });

  while (state.at !== 'finished') {
    switch (state.at) {
      case 'model_turn': {
        if (stats.steps >= limits.max_steps) {
          state = finish(trace, 'step_limit', `reached max_steps (${limits.max_steps})`);
          break;
        }
        if (clock() >= deadline || (options.halt && 'before_turn' in options.halt && options.halt.before_turn === stats.steps + 1)) {
          state = finish(trace, 'wall_time_limit', wallTimeDetail);
          break;
        }
        stats.steps++;
        tools.step = stats.steps;
        const change = await tools.sync();
        if (change) {
          catalogUpdates.push({ before_message: messages.length, removed: change.removed, added: change.added });
          validators = validatorsFor(tools.catalog);
          trace.emit('catalog_changed', { step: stats.steps, removed: change.removed, added: change.added.map((tool) => tool.name) });
        }
        if (options.halt && 'during_turn' in options.halt && options.halt.during_turn === stats.steps) {
          state = finish(trace, 'wall_time_limit', MODEL_TURN_PAST_WALL_TIME(limits.wall_time_ms));
          break;
        }
        const started = clock();
        try {
          const observation = observationOf(messages, tools.catalog);
          const observe = (signal: AbortSignal) => policy.next(observation, signal);
          const action = enforceWallTime ? await withDeadline(observe, deadline - clock()) : await observe(new AbortController().signal);
          trace.emit('model_turn', { step: stats.steps, action: action?.kind ?? null, duration_ms: round(clock() - started) });
          state = { at: 'parse_action', action };
        } catch (error) {
          if (error instanceof WallTimeExceeded) {
            state = finish(trace, 'wall_time_limit', MODEL_TURN_PAST_WALL_TIME(limits.wall_time_ms));
          } else if (error instanceof InfrastructureError) {
            trace.emit('infrastructure_error', { step: stats.steps, message: error.message, duration_ms: round(clock() - started) });
            throw error;
          } else {
            state = finish(trace, 'policy_error', error instanceof Error ? error.message : String(error));
          }
        }
        break;
      }

      case 'parse_action': {
        const action = state.action as Action | undefined;
        if (action?.kind === 'final_text' && typeof action.text === 'string') {
          messages.push({ role: 'assistant', content: action.text });
          finalText = action.text;
          trace.emit('action_parsed', { kind: 'final_text', chars: action.text.length });
          state = options.user && stats.user_turns < limits.max_user_turns ? { at: 'user_turn' } : finish(trace, 'final_answer');
        } else if (wellFormedCalls(action)) {
          const requests: ToolCallRequest[] = action.kind === 'tool_call' ? [{ name: action.name, arguments: action.arguments }] : action.calls;
          const calls: ToolCall[] = requests.map((request) => ({ id: `call_${++callCounter}`, name: request.name, arguments: request.arguments ?? null }));
          const first = calls[0]!;
          if (typeof action.backoff_ms === 'number' && action.backoff_ms > 0) {
            const wait = enforceWallTime ? Math.min(action.backoff_ms, Math.max(0, deadline - clock())) : action.backoff_ms;
            trace.emit('backoff', { call_id: first.id, requested_ms: action.backoff_ms, waited_ms: wait });
            await new Promise((resolve) => setTimeout(resolve, wait));
          }
          const message: AssistantMessage = { role: 'assistant', content: typeof action.text === 'string' ? action.text : '', tool_calls: calls };
          messages.push(message);
          if (calls.length === 1) trace.emit('action_parsed', { kind: 'tool_call', call_id: first.id, tool: first.name });
          else trace.emit('action_parsed', { kind: 'tool_calls', calls: calls.map((call) => ({ call_id: call.id, tool: call.name })) });
          queued = calls.slice(1);
          state = { at: 'validate', call: first };
        } else {
          const raw = action?.kind === 'malformed_tool_call' && typeof action.raw === 'string' ? action.raw : safeText(action);
          const reason =
            action?.kind === 'malformed_tool_call' && typeof action.reason === 'string' ? action.reason : 'the turn is neither a final answer nor a well-formed tool call';
          messages.push({ role: 'assistant', content: raw, malformed_tool_call: { reason } });
          trace.emit('action_parsed', { kind: 'malformed_tool_call', reason });
          state = reject(null, 'malformed_tool_call', `malformed tool call: ${reason}`);
        }
        break;
      }

      case 'validate': {
        const call: ToolCall = state.call;
        const validate = validators.get(call.name);
        if (!validate) {
          state = reject(call, 'unknown_tool', `unknown tool "${call.name}"; available tools: ${tools.catalog.map((tool) => tool.name).join(', ')}`);
          break;
        }
        const errors = validate(call.arguments);
        if (errors.length > 0) {
          state = reject(call, 'invalid_arguments', formatFieldErrors(errors), errors);
          break;
        }
        if (limitOutcome || stats.tool_calls >= limits.max_tool_calls) {
          limitOutcome = { kind: 'tool_call_limit', detail: `reached max_tool_calls (${limits.max_tool_calls})` };
          state = reject(call, 'tool_call_limit', `tool call limit (${limits.max_tool_calls}) reached; the call was not executed`);
          break;
        }
        trace.emit('arguments_validated', { call_id: call.id, tool: call.name });
        state = { at: 'execute', call, args: call.arguments as JsonObject };
        break;
      }

      case 'execute': {
        const call: ToolCall = state.call;
        const args: JsonObject = state.args;
        if (clock() >= deadline || (options.halt && 'before_executing' in options.halt && options.halt.before_executing === call.id)) {
          state = finish(trace, 'wall_time_limit', `${wallTimeDetail} before executing ${call.id}`);
          break;
        }
        stats.tool_calls++;
        trace.emit('tool_execution_started', { call_id: call.id, tool: call.name });
        const started = clock();
        const execution = await tools.call(call.name, args, { timeoutMs: limits.tool_timeout_ms, ...(options.signal ? { signal: options.signal } : {}) });
        const bytes = Buffer.byteLength(execution.content, 'utf8');
        trace.emit('tool_execution_finished', {
          call_id: call.id,
          tool: call.name,
          ok: execution.result.ok,
          ...(execution.result.kind ? { kind: execution.result.kind } : {}),
          duration_ms: round(clock() - started),
          result_bytes: bytes,
        });
        if (bytes > limits.max_result_bytes) {
          // The tool ran and its effect stands; only the oversized text is withheld.
          const error = `result too large: ${bytes} bytes exceeds max_result_bytes (${limits.max_result_bytes})`;
          state = {
            at: 'reinject',
            message: {
              role: 'tool',
              tool_call_id: call.id,
              name: call.name,
              content: JSON.stringify({ ok: false, kind: 'result_too_large', error }),
              tool_result: { ok: false, kind: 'result_too_large', error },
            },
          };
          break;
        }
        state = { at: 'reinject', message: { role: 'tool', tool_call_id: call.id, name: call.name, content: execution.content, tool_result: execution.result } };
        break;
      }

      case 'reinject': {
        const message: ToolMessage = state.message;
        const then: Outcome | undefined = state.then;
        messages.push(message);
        if (!message.tool_result.ok) stats.error_turns++;
        trace.emit('result_committed', { call_id: message.tool_call_id, ok: message.tool_result.ok, messages: messages.length });
        // Every call of the turn is answered, even past the limit, so each has its tool message.
        const nextCall = queued.shift();
        if (nextCall) state = { at: 'validate', call: nextCall };
        else if (then ?? limitOutcome) state = finish(trace, (then ?? limitOutcome)!.kind, (then ?? limitOutcome)!.detail);
        else state = { at: 'model_turn' };
        break;
      }

      case 'user_turn': {
        const user = options.user!;
        if (options.halt && 'during_user_turn' in options.halt && options.halt.during_user_turn === stats.user_turns + 1) {
          state = finish(trace, 'wall_time_limit', USER_TURN_PAST_WALL_TIME(limits.wall_time_ms));
          break;
        }
        const started = clock();
        try {
          const observation = { messages: copyPlain(messages) };
          const respond = (signal: AbortSignal) => user.respond(observation, signal);
          const reply = enforceWallTime ? await withDeadline(respond, deadline - clock()) : await respond(new AbortController().signal);
          if (reply.kind === 'reply' && reply.text.trim() !== '') {
            stats.user_turns++;
            messages.push({ role: 'user', content: reply.text });
            trace.emit('user_turn', { turn: stats.user_turns, chars: reply.text.length, duration_ms: round(clock() - started) });
            state = { at: 'model_turn' };
          } else {
            trace.emit('user_done', { duration_ms: round(clock() - started) });
            state = finish(trace, 'final_answer');
          }
        } catch (error) {
          if (error instanceof WallTimeExceeded) {
            state = finish(trace, 'wall_time_limit', USER_TURN_PAST_WALL_TIME(limits.wall_time_ms));
          } else {
            trace.emit('infrastructure_error', { user_turn: stats.user_turns + 1, message: error instanceof Error ? error.message : String(error), duration_ms: round(clock() - started) });
            // A user simulator that fails says nothing about the agent: the episode is not a record.
            throw error instanceof InfrastructureError ? error : new InfrastructureError(`user simulator failed: ${error instanceof Error ? error.message : String(error)}`);
          }
        }
        break;
      }
    }
  }

  const outcome = (state as { outcome: Outcome }).outcome;
  trace.emit('loop_finished', { outcome: outcome.kind, ...(outcome.detail ? { detail: outcome.detail } : {}), ...stats });
  return { messages, outcome, stats, final_text: finalText, catalog_updates: catalogUpdates };
}

/**
 * What the policy sees this turn: deep copies, so nothing a policy does to its
 * observation can change the record. Each copy is made the first time the
 * policy reads it (of the conversation and catalog as they are now): a
 * scripted policy reads the catalog once per episode and the replay policy
 * never, and the catalog, every tool's schemas, is the larger part to copy.
 */
function observationOf(messages: readonly Message[], catalog: readonly ToolDescriptor[]): Observation {
  const conversation = messages.slice();
  const listed = catalog.slice();
  let messagesCopy: Message[] | undefined;
  let toolsCopy: ToolDescriptor[] | undefined;
  return {
    get messages() {
      return (messagesCopy ??= copyPlain(conversation));
    },
    get tools() {
      return (toolsCopy ??= copyPlain(listed));
    },
  };
}

/** A tool_call with a name, or a tool_calls turn whose every call has a name. */
function wellFormedCalls(action: Action | undefined): action is Extract<Action, { kind: 'tool_call' | 'tool_calls' }> {
  if (action?.kind === 'tool_call') return typeof action.name === 'string' && action.name.length > 0;
  if (action?.kind === 'tool_calls') {
    return Array.isArray(action.calls) && action.calls.length > 0 && action.calls.every((call) => typeof call?.name === 'string' && call.name.length > 0);
  }
  return false;
}

function finish(trace: TraceSink, kind: OutcomeKind, detail?: string): State {
  if (kind !== 'final_answer') trace.emit('limit_or_stop', { outcome: kind, ...(detail ? { detail } : {}) });
  return { at: 'finished', outcome: detail === undefined ? { kind } : { kind, detail } };
}

/** Runs `work` with an abort signal that fires at the deadline, and stops waiting then even if `work` ignores it. */
async function withDeadline<T>(work: (signal: AbortSignal) => Promise<T>, remainingMs: number): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, rejectPromise) => {
    timer = setTimeout(() => {
      // Settle first: work that rejects as soon as it is aborted must not win the race with its own error.
      rejectPromise(new WallTimeExceeded());
      controller.abort();
    }, Math.max(0, remainingMs));
  });
  try {
    return await Promise.race([work(controller.signal), expired]);
  } finally {
    clearTimeout(timer);
  }
}

function safeText(value: unknown): string {
  try {
    return typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function round(milliseconds: number): number {
  return Math.round(milliseconds * 1000) / 1000;
}
