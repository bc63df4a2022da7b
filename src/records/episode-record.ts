// Owns the episode record: the dataset card's fields (record_id, family, tools,
// messages, recovery, result, provenance) plus what the factory knows beyond
// them. schemas/episode-record.v1.schema.json is the authority; these types
// mirror it.

import type { AssistantMessage, Message, SystemMessage, ToolDescriptor, ToolMessage, UserMessage } from '../core/conversation.js';
import type { JsonObject } from '../core/json-value.js';

export const RECORD_FAMILY = 'mcp-tool-use-episode';
export const RECORD_SCHEMA_VERSION = 'episode-record.v1';

export interface ServerFaultRecord {
  kind: 'crashed' | 'hung' | 'garbage_output' | 'spawn_failed' | 'leftover_processes';
  /** The model turn it happened in; 0 is before the first turn. */
  step: number;
  detail: string;
}

/**
 * A tool as a record stores it. Schemas and annotations are free-form JSON
 * whose shape differs from tool to tool, so they are stored as JSON-encoded
 * strings: every record then has one stable column type for every loader
 * (pyarrow, Hugging Face datasets, DuckDB). `JSON.parse` them back.
 */
export interface RecordTool {
  name: string;
  description: string;
  input_schema: string;
  output_schema?: string;
  annotations?: string;
}

/** A tool call as a record stores it: the arguments exactly as emitted, JSON-encoded (they may be wrongly typed on purpose). */
export interface RecordToolCall {
  id: string;
  name: string;
  arguments: string;
}

export type RecordAssistantMessage = Omit<AssistantMessage, 'tool_calls'> & { tool_calls?: RecordToolCall[] };
export type RecordMessage = SystemMessage | UserMessage | RecordAssistantMessage | ToolMessage;

/** Descriptors are read-only and the harness reuses them across episodes: print each once. */
const storedTools = new WeakMap<ToolDescriptor, RecordTool>();

/** Whether every hidden predicate of a record passed: the reward env serve gives (task_completed also asks for a final answer and backed claims). */
export function everyPredicatePassed(record: EpisodeRecord): boolean {
  return record.result.predicates.every((predicate) => predicate.passed);
}

export function toRecordTool(tool: ToolDescriptor): RecordTool {
  let stored = storedTools.get(tool);
  if (!stored) {
    stored = { name: tool.name, description: tool.description, input_schema: JSON.stringify(tool.input_schema) };
    if (tool.output_schema) stored.output_schema = JSON.stringify(tool.output_schema);
    if (tool.annotations) stored.annotations = JSON.stringify(tool.annotations);
    storedTools.set(tool, stored);
  }
  // Each record gets its own object (the strings are shared, being immutable).
  return { ...stored };
}

export function fromRecordTool(tool: RecordTool): ToolDescriptor {
  const descriptor: ToolDescriptor = { name: tool.name, description: tool.description, input_schema: JSON.parse(tool.input_schema) as JsonObject };
  if (tool.output_schema !== undefined) descriptor.output_schema = JSON.parse(tool.output_schema) as JsonObject;
  if (tool.annotations !== undefined) descriptor.annotations = JSON.parse(tool.annotations) as JsonObject;
  return descriptor;
}

export function toRecordMessage(message: Message): RecordMessage {
  if (message.role !== 'assistant') return message;
  const { tool_calls: calls, ...rest } = message;
  if (!calls) return rest;
  return { ...rest, tool_calls: calls.map((call) => ({ id: call.id, name: call.name, arguments: JSON.stringify(call.arguments ?? null) })) };
}

/** The conversation as the runtime holds it: arguments decoded back into values. */
export function fromRecordMessage(message: RecordMessage): Message {
  if (message.role !== 'assistant' || !message.tool_calls) return message as Message;
  return { ...message, tool_calls: message.tool_calls.map((call) => ({ id: call.id, name: call.name, arguments: JSON.parse(call.arguments) as unknown })) };
}

export interface PredicateResult {
  id: string;
  passed: boolean;
  detail?: string;
}

export interface FaultFired {
  kind: string;
  /** The plan entry that fired. */
  fault: string;
  /** The model turn it fired in; 0 is the catalog listing before the first turn. */
  step: number;
  tool: string | null;
  call: number | null;
  detail: string;
}

export interface CatalogUpdateRecord {
  before_message: number;
  removed: string[];
  added: RecordTool[];
}

export interface Lineage {
  lane: string;
  lane_sha256: string;
  task: string;
  variant: string;
  seed: number;
  /** A GRPO group: the id its rollouts share (the record id before `.r<rollout>`); present only with `rollout`. */
  group_id?: string;
  /** The record's place in its group; absent for a record that is its (task, seed, agent)'s only one. */
  rollout?: number;
  /** Which phrasing of the task's grammar the user message is (its choices, "say=1 greet=- ask=0"); absent for a one-sentence message. */
  phrasing?: string;
  /** "generate" for originals; later operations (dedup, merge) name themselves. */
  operation: string;
  source_record_id: string | null;
  generate_command: string;
  replay_command: string;
  factory_version: string;
}

export interface EpisodeRecord {
  record_id: string;
  family: typeof RECORD_FAMILY;
  schema_version: typeof RECORD_SCHEMA_VERSION;
  world: { name: string; version: string };
  task: { id: string; title: string; tags: string[] };
  tools: RecordTool[];
  messages: RecordMessage[];
  catalog_updates: CatalogUpdateRecord[];
  recovery: {
    /** Tool messages with ok:false, whatever the cause. */
    error_turns: number;
    /** At least one error turn or fired fault, and the task was still completed. */
    recovered: boolean;
    faults_fired: FaultFired[];
    /** Server worlds only: the third-party child crashed, hung, wrote garbage to stdout or left processes behind; it was killed (and restarted on the same sandbox when the episode went on). */
    server_faults?: ServerFaultRecord[];
  };
  result: {
    task_completed: boolean;
    verified_by: 'replay';
    outcome: string;
    outcome_detail?: string;
    predicates: PredicateResult[];
    /** Claims of the final answer, each checked against the calls that succeeded. */
    evidence: { claims: { tool: string; sentence: string; supported: boolean }[]; unsupported: number };
    steps: number;
    tool_calls: number;
    rejected_calls: number;
    initial_snapshot_sha256: string;
    final_snapshot_sha256: string;
  };
  provenance: {
    produced_at: string;
    actors: JsonObject[];
    lineage: Lineage;
  };
}

export interface RejectedRow {
  record_id: string;
  lane: string;
  task: string;
  seed: number;
  /** Where it failed: plan (task parameters), run, schema, or replay; infra when the model server failed, so the episode says nothing about the agent. */
  stage: 'plan' | 'run' | 'schema' | 'replay' | 'infra';
  reason: string;
  record: EpisodeRecord | null;
}
