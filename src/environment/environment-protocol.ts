// Owns the wire of `env serve`: the JSON errors it answers with, reading the
// bodies of /reset and /step (every problem names its field), turning an
// OpenAI-style assistant message into the policy contract's Action, turning
// the runner's messages and catalog back into OpenAI chat shape, and the
// reward, which is read off the record's own judgement (never a second one).

import { MAX_JSON_DEPTH, valueDepth } from '../core/bounded-json.js';
import type { Message, ToolDescriptor } from '../core/conversation.js';
import { isJsonObject, type JsonObject } from '../core/json-value.js';
import { parseArguments } from '../models/message-translation.js';
import { toChatMessage, type ChatMessage, type ChatTool } from '../records/chat-format.js';
import type { EpisodeSpec } from '../lanes/episode-plan.js';
import type { Lane, Task } from '../lanes/lane.js';
import type { Action, ToolCallRequest } from '../policy/policy-contract.js';
import { everyPredicatePassed, toRecordMessage, type EpisodeRecord, type PredicateResult, type RecordMessage } from '../records/episode-record.js';

/** A request the server refuses: its HTTP status and the JSON body `{error: {code, message, field?, fix?}}`. */
export class EnvironmentError extends Error {
  override readonly name = 'EnvironmentError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: { field?: string; fix?: string; problems?: string[]; extra?: JsonObject } = {},
  ) {
    super(message);
  }

  body(): JsonObject {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.details.field !== undefined ? { field: this.details.field } : {}),
        ...(this.details.fix !== undefined ? { fix: this.details.fix } : {}),
        ...(this.details.problems !== undefined ? { problems: this.details.problems } : {}),
      },
      ...(this.details.extra ?? {}),
    };
  }
}

const badField = (field: string, message: string, fix?: string) => new EnvironmentError(400, 'invalid_request', `${field}: ${message}`, { field, ...(fix ? { fix } : {}) });

/** How much of a value a client sent an error message quotes. */
const SHOWN_CHARACTERS = 80;
const SHOWN_DEPTH = 4;

/** A value a client sent, as an error quotes it: cut short, and a nested one only named, so a hostile value is never serialized whole into the answer. */
export function shown(value: unknown): string {
  if (typeof value === 'object' && value !== null && valueDepth(value, SHOWN_DEPTH) > SHOWN_DEPTH) return Array.isArray(value) ? 'a nested list' : 'a nested object';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > SHOWN_CHARACTERS ? `${text.slice(0, SHOWN_CHARACTERS)}…` : text;
}

/** Who drives the episode, as the record's policy actor names it. */
export interface RemoteAgent {
  name: string;
  version: string;
}

export const DEFAULT_AGENT: RemoteAgent = { name: 'remote-agent', version: 'unknown' };
/** Agent names become part of record ids (`remote-<name>`), so only characters safe in file names. */
const AGENT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
export const MAX_SEED = 999_999_999;
/** The last rollout index of a group, as the record schema bounds it. */
export const MAX_ROLLOUT = 9999;

export interface ResetRequest {
  task: Task;
  seed: number;
  agent: RemoteAgent;
  /** One of a GRPO group's rollouts: kept as a record of its own beside the group's others (EpisodeSpec.rollout). */
  rollout?: number;
}

/** A reset's `rollout`: absent, or a whole number from 0 to MAX_ROLLOUT (the error names the field and the bound). */
export function parseRollout(value: unknown): { rollout?: number } {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_ROLLOUT) {
    throw badField('rollout', `must be a whole number from 0 to ${MAX_ROLLOUT}, got ${shown(value)}`, 'number the K rollouts of a group 0..K-1: each is kept as its own record of the same task and seed');
  }
  return { rollout: value };
}

function expectObject(body: unknown, what: string): JsonObject {
  if (!isJsonObject(body)) throw new EnvironmentError(400, 'invalid_request', `the body of ${what} must be a JSON object`, { fix: `send e.g. ${what === '/reset' ? '{"task": "...", "seed": 0}' : '{"episode_id": "...", "message": {"role": "assistant", "content": "..."}}'}` });
  return body;
}

function refuseUnknown(body: JsonObject, known: readonly string[], where: string): void {
  const unknown = Object.keys(body).filter((key) => !known.includes(key));
  if (unknown.length > 0) throw badField(where === '' ? unknown[0]! : `${where}.${unknown[0]!}`, 'is not a field this server reads', `the fields are: ${known.join(', ')}`);
}

export function parseResetRequest(body: unknown, lane: Lane): ResetRequest {
  const object = expectObject(body ?? {}, '/reset');
  refuseUnknown(object, ['task', 'seed', 'agent', 'rollout'], '');
  const tasks = lane.document.tasks;
  const taskList = tasks.map((task) => task.id).join(', ');
  let task: Task | undefined;
  if (object.task === undefined || object.task === null) {
    if (tasks.length !== 1) throw badField('task', `is required: lane ${lane.name} has ${tasks.length} tasks`, `pass one of: ${taskList}`);
    task = tasks[0]!;
  } else {
    if (typeof object.task !== 'string') throw badField('task', `must be a task id (a string), got ${shown(object.task)}`, `pass one of: ${taskList}`);
    task = tasks.find((candidate) => candidate.id === object.task);
    if (!task) throw badField('task', `lane ${lane.name} has no task ${shown(object.task)}`, `pass one of: ${taskList}`);
  }
  let seed = lane.seeds.from;
  if (object.seed !== undefined && object.seed !== null) {
    if (typeof object.seed !== 'number' || !Number.isInteger(object.seed) || object.seed < 0 || object.seed > MAX_SEED) {
      throw badField('seed', `must be a whole number from 0 to ${MAX_SEED}, got ${shown(object.seed)}`, `the lane's own seeds are ${lane.seeds.from}..${lane.seeds.to}`);
    }
    seed = object.seed;
  }
  return { task, seed, agent: parseAgent(object.agent), ...parseRollout(object.rollout) };
}

export function parseAgent(value: unknown): RemoteAgent {
  if (value === undefined || value === null) return DEFAULT_AGENT;
  const nameFix = 'letters, digits, ".", "_" and "-", at most 64, starting with a letter or digit, e.g. "qwen2.5-7b-grpo"';
  if (typeof value === 'string') {
    if (!AGENT_NAME.test(value)) throw badField('agent', `${shown(value)} is not an agent name`, nameFix);
    return { name: value, version: DEFAULT_AGENT.version };
  }
  if (!isJsonObject(value)) throw badField('agent', 'must be a name or {"name": ..., "version": ...}');
  refuseUnknown(value, ['name', 'version'], 'agent');
  if (typeof value.name !== 'string' || !AGENT_NAME.test(value.name)) throw badField('agent.name', `${shown(value.name)} is not an agent name`, nameFix);
  if (value.version !== undefined && (typeof value.version !== 'string' || value.version.length === 0 || value.version.length > 128)) {
    throw badField('agent.version', 'must be a non-empty string of at most 128 characters', 'e.g. a checkpoint step or a commit');
  }
  return { name: value.name, version: typeof value.version === 'string' ? value.version : DEFAULT_AGENT.version };
}

/** The record variant of a remote agent's episodes: it names itself with a colon, as model policies do, so record ids get a suffix and replay re-issues the recorded actions. */
export function remoteVariant(agent: RemoteAgent): string {
  return `remote:${agent.name}`;
}

/** The episode a reset opens, as production and record ids take it: the agent is its variant, the rollout names its record. */
export function remoteSpec(lane: Lane, request: ResetRequest): EpisodeSpec {
  return { lane, task: request.task, seed: request.seed, policy: remoteVariant(request.agent), ...(request.rollout === undefined ? {} : { rollout: request.rollout }) };
}

export function remoteActor(agent: RemoteAgent): JsonObject & { role: string; kind: string; name: string; version: string } {
  return { role: 'policy', kind: 'remote', name: agent.name, version: agent.version };
}

export interface StepRequest {
  episodeId: string;
  action: Action;
  /** The ids the client gave its calls, in order (undefined where it gave none). */
  clientIds: (string | undefined)[];
}

export function parseEpisodeId(value: unknown, field = 'episode_id'): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 200) throw badField(field, 'is required: the episode_id /reset answered with', 'call /reset first and pass its episode_id');
  return value;
}

/**
 * Reads `{episode_id, message}`. The message is an OpenAI assistant message:
 * no tool calls is a final text (the answer, or a turn for the user to reply
 * to); one call is a tool_call; several are one tool_calls turn. Arguments
 * given as a string are JSON-parsed; a string that is not JSON is passed on
 * as it is, and the runner answers that call with invalid_arguments: that is
 * the agent's behaviour, recorded, not a bad request. Arguments (given as
 * JSON or in a string) that nest deeper than MAX_JSON_DEPTH are a bad
 * request naming the field: past it, the runner, the world and the record
 * would recurse over them.
 */
export function parseStepRequest(body: unknown): StepRequest {
  const object = expectObject(body, '/step');
  refuseUnknown(object, ['episode_id', 'message'], '');
  const episodeId = parseEpisodeId(object.episode_id);
  return { episodeId, ...parseAssistantMessage(object.message) };
}

/** An OpenAI assistant message (the `message` field of a step) as the policy contract's Action, with the ids the client gave its calls. */
export function parseAssistantMessage(message: unknown): { action: Action; clientIds: (string | undefined)[] } {
  if (!isJsonObject(message)) throw badField('message', 'is required: an assistant message {"role": "assistant", "content": ..., "tool_calls": [...]}');
  // Other fields of a chat completion's message (refusal, reasoning_content, annotations, ...) are not the turn: a client may pass the message on as the server gave it.
  if (message.role !== undefined && message.role !== 'assistant') throw badField('message.role', `must be "assistant", got ${shown(message.role)}`);
  const text = contentText(message.content);
  const rawCalls = message.tool_calls;
  if (rawCalls !== undefined && rawCalls !== null && !Array.isArray(rawCalls)) throw badField('message.tool_calls', 'must be a list of {"type": "function", "function": {"name", "arguments"}}');
  const calls: ToolCallRequest[] = [];
  const clientIds: (string | undefined)[] = [];
  for (const [index, call] of (rawCalls ?? []).entries()) {
    const where = `message.tool_calls[${index}]`;
    if (!isJsonObject(call)) throw badField(where, 'must be an object {"id"?, "type": "function", "function": {"name", "arguments"}}');
    if (call.type !== undefined && call.type !== 'function') throw badField(`${where}.type`, `must be "function", got ${shown(call.type)}`);
    if (call.id !== undefined && call.id !== null && typeof call.id !== 'string') throw badField(`${where}.id`, 'must be a string');
    const fn = call.function;
    if (!isJsonObject(fn)) throw badField(`${where}.function`, 'is required: {"name": ..., "arguments": ...}');
    if (typeof fn.name !== 'string' || fn.name.length === 0) throw badField(`${where}.function.name`, 'is required: the name of a tool from the catalog');
    calls.push({ name: fn.name, arguments: argumentsOf(fn.arguments, `${where}.function.arguments`) });
    clientIds.push(typeof call.id === 'string' ? call.id : undefined);
  }
  const action: Action =
    calls.length === 0
      ? { kind: 'final_text', text }
      : calls.length === 1
        ? { kind: 'tool_call', ...calls[0]!, ...(text ? { text } : {}) }
        : { kind: 'tool_calls', calls, ...(text ? { text } : {}) };
  return { action, clientIds };
}

/** A message's content: a string, null, or a list of parts whose text parts are joined. */
function contentText(content: unknown): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part, index) => {
        if (isJsonObject(part) && part.type === 'text' && typeof part.text === 'string') return part.text;
        throw badField(`message.content[${index}]`, 'must be a text part {"type": "text", "text": ...}; a turn of the agent is text and tool calls');
      })
      .join('');
  }
  throw badField('message.content', 'must be a string, null, or a list of text parts');
}

/**
 * Absent arguments are an empty object (a call of a tool that takes none); a
 * string is JSON-parsed, and kept as text when it is not JSON. Either way the
 * value nests at most MAX_JSON_DEPTH levels. A string is parsed before its
 * depth is judged (JSON.parse itself does not recurse), so text that is not
 * JSON stays the agent's own, however many brackets it holds.
 */
export function argumentsOf(value: unknown, field: string): unknown {
  const parsed = parseArguments(value);
  // Text that is not JSON stays the agent's own: only parsed values are judged by depth.
  if (typeof value === 'string' && parsed === value) return parsed;
  if (valueDepth(parsed, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
    throw badField(field, `nests deeper than ${MAX_JSON_DEPTH} levels (the limit on nesting of a tool call's arguments)`, `send arguments that nest at most ${MAX_JSON_DEPTH} levels`);
  }
  return parsed;
}

/** Runner messages as OpenAI chat messages: tool-call arguments as JSON strings, ids as the runner numbered them. */
export function chatFromRuntime(messages: readonly Message[]): ChatMessage[] {
  return messages.map((message) => toChatMessage(toRecordMessage(message), 'string'));
}

/** A record's messages as OpenAI chat messages. */
export function chatFromRecord(messages: readonly RecordMessage[]): ChatMessage[] {
  return messages.map((message) => toChatMessage(message, 'string'));
}

export function chatTools(tools: readonly ToolDescriptor[]): ChatTool[] {
  return tools.map((tool) => ({ type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.input_schema } }));
}

export interface Reward {
  /** 1 when every hidden predicate passed, else 0. */
  reward: number;
  passed: number;
  total: number;
  predicates: PredicateResult[];
  /** The record's task_completed: every predicate passed, the episode ended with a final answer, and no claim of it lacks a call behind it. */
  completed: boolean;
  outcome: string;
  outcome_detail?: string;
  /** Claims of the final answer with no successful call behind them. */
  unsupported_claims: number;
  steps: number;
  tool_calls: number;
}

/** The reward of a finished episode, read off its record's judgement. */
export function rewardOf(record: EpisodeRecord): Reward {
  const { result } = record;
  const passed = result.predicates.filter((predicate) => predicate.passed).length;
  return {
    reward: everyPredicatePassed(record) ? 1 : 0,
    passed,
    total: result.predicates.length,
    predicates: result.predicates,
    completed: result.task_completed,
    outcome: result.outcome,
    ...(result.outcome_detail !== undefined ? { outcome_detail: result.outcome_detail } : {}),
    unsupported_claims: result.evidence.unsupported,
    steps: result.steps,
    tool_calls: result.tool_calls,
  };
}
