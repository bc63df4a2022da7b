// Owns OpenEnv's wire as `env serve` speaks it beside its native API: the
// error frames and their codes, reading a reset's data (a task and seed
// derived from a bare seed, so an unmodified OpenEnv client reaches every
// task), reading an action (OpenEnv's list_tools and call_tool, and a
// `message` action carrying one OpenAI assistant message), and the
// observations, state, metadata and JSON Schemas it answers with. The shapes
// follow OpenEnv's own server (openenv-core 0.2.3, src/openenv/core/env_server):
// an observation travels as {observation, reward, done}, with reward and done
// lifted out of it.

import type { ToolDescriptor, ToolResult } from '../core/conversation.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../core/json-value.js';
import { FACTORY_VERSION } from '../core/package-paths.js';
import type { Lane, Task } from '../lanes/lane.js';
import type { Action } from '../policy/policy-contract.js';
import type { EnvironmentEpisode, StepAnswer } from './environment-episode.js';
import { argumentsOf, EnvironmentError, MAX_SEED, parseAgent, parseAssistantMessage, parseRollout, shown, type ResetRequest, type Reward } from './environment-protocol.js';

/** OpenEnv's error codes (its WSErrorCode). The first four leave the socket open; the others close it. */
export type OpenEnvErrorCode = 'INVALID_JSON' | 'UNKNOWN_TYPE' | 'VALIDATION_ERROR' | 'EXECUTION_ERROR' | 'CAPACITY_REACHED' | 'SESSION_ERROR';

/** A frame refused: `{"type": "error", "data": {message, code, ...}}`. */
export class OpenEnvError extends Error {
  override readonly name = 'OpenEnvError';
  constructor(
    readonly code: OpenEnvErrorCode,
    message: string,
    readonly extra: JsonObject = {},
  ) {
    super(message);
  }

  frame(): JsonObject {
    return { type: 'error', data: { message: this.message, code: this.code, ...this.extra } };
  }
}

/** A field that does not fit: OpenEnv's VALIDATION_ERROR, with pydantic's list of errors (`loc` is the path to the field). */
export function validationError(field: string, message: string, fix?: string): OpenEnvError {
  const loc = field.split(/[.[\]]+/).filter((part) => part !== '').map((part) => (/^\d+$/.test(part) ? Number(part) : part));
  return new OpenEnvError('VALIDATION_ERROR', `${field}: ${message}`, { errors: [{ type: 'value_error', loc, msg: message }], ...(fix ? { fix } : {}) });
}

/** A refusal of the native API, said in OpenEnv's codes; its own code and fix travel along. */
export function openEnvErrorOf(error: EnvironmentError, maxEpisodes: number, live: number): OpenEnvError {
  const native = { reason: error.code, ...(error.details.fix ? { fix: error.details.fix } : {}), ...(error.details.problems ? { problems: error.details.problems } : {}) };
  if (error.code === 'too_many_episodes') return new OpenEnvError('CAPACITY_REACHED', error.message, { active_sessions: live, max_sessions: maxEpisodes, ...native });
  if (error.code === 'invalid_request' && error.details.field !== undefined) {
    const loc = error.details.field.split(/[.[\]]+/).filter((part) => part !== '');
    return new OpenEnvError('VALIDATION_ERROR', error.message, { errors: [{ type: 'value_error', loc, msg: error.message }], ...native });
  }
  return new OpenEnvError('EXECUTION_ERROR', error.message, native);
}

/**
 * A reset's data as the episode to open. `task` and `seed` are as the native
 * /reset reads them. Without a task, a lane of N tasks plays task number
 * `seed mod N` (in the lane's order) on seed `floor(seed / N)`: seeds 0..N-1
 * are every task on seed 0, the next N every task on seed 1, and so on, so a
 * client that only counts seeds (OpenEnv's, verifiers') reaches every task.
 * No seed is seed 0. `rollout` numbers one of a GRPO group's rollouts, as on
 * the native /reset. `episode_id` (OpenEnv's own field: the server names its
 * episodes itself) and any other key are ignored, as OpenEnv drops keyword
 * arguments its environment's reset does not take (TRL passes a whole dataset row).
 */
export function parseOpenEnvReset(data: unknown, lane: Lane): ResetRequest & { derived: boolean } {
  if (data !== undefined && data !== null && !isJsonObject(data)) throw validationError('data', 'must be an object such as {"seed": 3} or {"task": "...", "seed": 3}');
  const object: JsonObject = isJsonObject(data) ? data : {};
  const tasks = lane.document.tasks;
  const taskList = tasks.map((task) => task.id).join(', ');
  let seed = 0;
  if (object.seed !== undefined && object.seed !== null) {
    if (typeof object.seed !== 'number' || !Number.isInteger(object.seed) || object.seed < 0 || object.seed > MAX_SEED) {
      throw validationError('seed', `must be a whole number from 0 to ${MAX_SEED}, got ${shown(object.seed)}`);
    }
    seed = object.seed;
  }
  let agent;
  let rollout;
  try {
    agent = parseAgent(object.agent);
    rollout = parseRollout(object.rollout);
  } catch (error) {
    if (error instanceof EnvironmentError && error.details.field) throw validationError(error.details.field, error.message.slice(error.details.field.length + 2), error.details.fix);
    throw error;
  }
  if (object.task === undefined || object.task === null) {
    const task = tasks[seed % tasks.length]!;
    return { task, seed: Math.floor(seed / tasks.length), agent, ...rollout, derived: tasks.length > 1 };
  }
  if (typeof object.task !== 'string') throw validationError('task', `must be a task id (a string), got ${shown(object.task)}`, `pass one of: ${taskList}`);
  const task: Task | undefined = tasks.find((candidate) => candidate.id === object.task);
  if (!task) throw validationError('task', `lane ${lane.name} has no task ${shown(object.task)}`, `pass one of: ${taskList}`);
  return { task, seed, agent, ...rollout, derived: false };
}

export type OpenEnvAction =
  | { type: 'list_tools' }
  | { type: 'call_tool'; toolName: string; action: Action }
  | { type: 'message'; action: Action; clientIds: (string | undefined)[] };

const ACTION_FIX = 'send {"type": "list_tools"}, {"type": "call_tool", "tool_name": ..., "arguments": {...}} or {"type": "message", "message": {"role": "assistant", ...}}';

/** A step's data (OpenEnv's action). `metadata`, which OpenEnv's clients send on every action, is accepted and not used. */
export function parseOpenEnvAction(data: unknown): OpenEnvAction {
  if (!isJsonObject(data)) throw validationError('data', 'must be an action object', ACTION_FIX);
  // OpenEnv's client sends the type; one that leaves it out is read by the field it does send.
  const type = data.type ?? (data.tool_name !== undefined ? 'call_tool' : data.message !== undefined ? 'message' : undefined);
  const allow = (known: string[]) => {
    const unknown = Object.keys(data).filter((key) => !known.includes(key) && key !== 'type' && key !== 'metadata');
    if (unknown.length > 0) throw validationError(unknown[0]!, `is not a field of a ${String(type)} action (extra fields are forbidden)`, ACTION_FIX);
  };
  if (data.metadata !== undefined && !isJsonObject(data.metadata)) throw validationError('metadata', 'must be an object');
  switch (type) {
    case 'list_tools':
      allow([]);
      return { type: 'list_tools' };
    case 'call_tool': {
      allow(['tool_name', 'arguments']);
      if (typeof data.tool_name !== 'string' || data.tool_name.length === 0) throw validationError('tool_name', 'is required: the name of a tool from the catalog', ACTION_FIX);
      let args: unknown;
      try {
        args = argumentsOf(data.arguments, 'arguments');
      } catch (error) {
        if (error instanceof EnvironmentError) throw validationError('arguments', error.message.slice('arguments: '.length));
        throw error;
      }
      return { type: 'call_tool', toolName: data.tool_name, action: { kind: 'tool_call', name: data.tool_name, arguments: args } };
    }
    case 'message': {
      allow(['message']);
      try {
        return { type: 'message', ...parseAssistantMessage(data.message) };
      } catch (error) {
        if (error instanceof EnvironmentError && error.details.field) throw validationError(error.details.field, error.message.slice(error.details.field.length + 2), error.details.fix);
        throw error;
      }
    }
    default:
      throw validationError('type', `${shown(type)} is not an action type here`, ACTION_FIX);
  }
}

/** What a step answers: OpenEnv's {observation, reward, done}, the reward a number only once the episode is done. */
export interface Observed {
  observation: JsonObject;
  reward: number | null;
  done: boolean;
}

/** The end of an episode, as the observation carries it beside the reward: the outcome and each hidden check's verdict. */
function ending(reward: Reward | undefined): JsonObject {
  if (!reward) return {};
  return {
    outcome: reward.outcome,
    ...(reward.outcome_detail !== undefined ? { outcome_detail: reward.outcome_detail } : {}),
    passed: reward.passed,
    total: reward.total,
    completed: reward.completed,
    predicates: reward.predicates as unknown as JsonValue,
    unsupported_claims: reward.unsupported_claims,
  };
}

export function resetObserved(episode: EnvironmentEpisode, start: { messages: unknown[]; tools: unknown[]; done: boolean }, reward: Reward | undefined): Observed {
  return {
    observation: {
      episode_id: episode.id,
      task: { id: episode.task.id, title: episode.task.title },
      seed: episode.seed,
      ...(episode.rollout === undefined ? {} : { rollout: episode.rollout }),
      messages: start.messages as JsonValue,
      tools: start.tools as JsonValue,
      ...ending(reward),
    },
    reward: reward ? reward.reward : null,
    done: start.done,
  };
}

/** A tool as OpenEnv's ListToolsObservation lists it (snake_case input_schema, as on its socket). */
export function openEnvTool(tool: ToolDescriptor): JsonObject {
  return { name: tool.name, description: tool.description, input_schema: tool.input_schema };
}

export function listToolsObserved(tools: readonly ToolDescriptor[], done: boolean): Observed {
  return { observation: { tools: tools.map(openEnvTool) }, reward: null, done };
}

/** OpenEnv's ToolError types, from the runner's kinds of failed call. */
function errorType(result: ToolResult): string {
  switch (result.kind) {
    case 'unknown_tool':
      return 'tool_not_found';
    case 'invalid_arguments':
    case 'malformed_tool_call':
      return 'invalid_args';
    case 'timeout':
      return 'timeout';
    case 'transport_error':
      return 'transport_error';
    default:
      return 'execution_error';
  }
}

/**
 * A tool's answer as MCP's CallToolResult dumps it on OpenEnv's wire
 * (content, structured_content, data, is_error): the text the agent sees,
 * and, when that text is JSON, its value.
 */
export function callToolResult(text: string, result: ToolResult | undefined): JsonObject {
  let value: JsonValue | undefined;
  try {
    value = JSON.parse(text) as JsonValue;
  } catch {
    value = undefined;
  }
  return {
    content: [{ type: 'text', text }],
    structured_content: isJsonObject(value) ? value : null,
    data: value === undefined ? text : value,
    is_error: result !== undefined && !result.ok,
  };
}

/** A call_tool step: OpenEnv's CallToolObservation, and, when the call ended the episode (a limit), how it ended. */
export function callToolObserved(toolName: string, answer: StepAnswer): Observed {
  const reply = answer.messages.find((message) => message.role === 'tool');
  const result = answer.tool_results[0];
  const failed = result !== undefined && !result.ok;
  return {
    observation: {
      tool_name: toolName,
      result: reply ? callToolResult(reply.content, result) : null,
      error: failed ? { error_type: errorType(result), message: result.error ?? reply?.content ?? 'the call failed' } : null,
      ...(answer.tools ? { tools: answer.tools as unknown as JsonValue } : {}),
      ...(answer.applied ? {} : { applied: false }),
      ...ending(answer.reward),
    },
    reward: answer.reward ? answer.reward.reward : null,
    done: answer.done,
  };
}

/** A message step: what the native /step answers, as an observation. */
export function messageObserved(answer: StepAnswer): Observed {
  return {
    observation: {
      assistant: answer.assistant as unknown as JsonValue,
      messages: answer.messages as unknown as JsonValue,
      ...(answer.tool_call_ids ? { tool_call_ids: answer.tool_call_ids } : {}),
      ...(answer.tools ? { tools: answer.tools as unknown as JsonValue } : {}),
      applied: answer.applied,
      ...ending(answer.reward),
    },
    reward: answer.reward ? answer.reward.reward : null,
    done: answer.done,
  };
}

/** OpenEnv's State: episode_id and step_count, and what else says where the episode is. */
export function stateOf(episode: EnvironmentEpisode | undefined, steps: number): JsonObject {
  if (!episode) return { episode_id: null, step_count: 0 };
  return { episode_id: episode.id, step_count: steps, task: episode.task.id, seed: episode.seed, phase: episode.phase, done: episode.phase === 'done' };
}

/** GET /metadata: OpenEnv's EnvironmentMetadata, all six fields. */
export function metadataOf(lane: Lane): JsonObject {
  return {
    name: lane.name,
    description: lane.document.description ?? `the tasks of lane ${lane.name} on the world ${lane.document.world.name}`,
    readme_content: null,
    version: FACTORY_VERSION,
    author: null,
    documentation_url: null,
  };
}

const MESSAGE_SCHEMA: JsonObject = {
  type: 'object',
  description: 'One OpenAI assistant message: text (the final answer, or a turn the user simulator answers) and/or tool_calls (several are one turn of parallel calls).',
  properties: {
    role: { const: 'assistant' },
    content: { anyOf: [{ type: 'string' }, { type: 'null' }, { type: 'array', items: { type: 'object' } }] },
    tool_calls: {
      type: 'array',
      items: {
        type: 'object',
        properties: { id: { type: 'string' }, type: { const: 'function' }, function: { type: 'object', properties: { name: { type: 'string' }, arguments: {} }, required: ['name'] } },
        required: ['function'],
      },
    },
  },
};

/** GET /schema: the action, observation and state as JSON Schemas. */
export function schemasOf(): JsonObject {
  const metadata = { type: 'object', default: {} };
  return {
    action: {
      title: 'Action',
      oneOf: [
        { title: 'ListToolsAction', type: 'object', properties: { type: { const: 'list_tools' }, metadata }, required: ['type'], additionalProperties: false },
        {
          title: 'CallToolAction',
          type: 'object',
          properties: { type: { const: 'call_tool' }, tool_name: { type: 'string' }, arguments: { type: 'object', default: {} }, metadata },
          required: ['tool_name'],
          additionalProperties: false,
        },
        { title: 'MessageAction', type: 'object', properties: { type: { const: 'message' }, message: MESSAGE_SCHEMA, metadata }, required: ['type', 'message'], additionalProperties: false },
      ],
    },
    observation: {
      title: 'Observation',
      type: 'object',
      description:
        'After reset: episode_id, task, seed, messages, tools. After list_tools: tools. After call_tool: tool_name, result {content, structured_content, data, is_error}, error {error_type, message} or null. ' +
        'After message: assistant, messages, applied. When done: outcome, passed, total, completed, predicates, unsupported_claims. Travels as {observation, reward, done}.',
      properties: {
        episode_id: { type: 'string' },
        task: { type: 'object', properties: { id: { type: 'string' }, title: { type: 'string' } } },
        seed: { type: 'integer' },
        messages: { type: 'array', items: { type: 'object' } },
        tools: { type: 'array', items: { type: 'object' } },
        tool_name: { type: 'string' },
        result: { anyOf: [{ type: 'object' }, { type: 'null' }] },
        error: { anyOf: [{ type: 'object', properties: { error_type: { enum: ['execution_error', 'invalid_args', 'transport_error', 'tool_not_found', 'timeout'] }, message: { type: 'string' } } }, { type: 'null' }] },
        outcome: { type: 'string' },
        predicates: { type: 'array', items: { type: 'object' } },
        completed: { type: 'boolean' },
      },
      additionalProperties: true,
    },
    state: {
      title: 'State',
      type: 'object',
      properties: {
        episode_id: { anyOf: [{ type: 'string' }, { type: 'null' }], default: null },
        step_count: { type: 'integer', minimum: 0, default: 0 },
        task: { type: 'string' },
        seed: { type: 'integer' },
        phase: { enum: ['starting', 'awaiting_action', 'running', 'done', 'failed', 'closed'] },
        done: { type: 'boolean' },
      },
      additionalProperties: true,
    },
  };
}
