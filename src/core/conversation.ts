// Owns the conversation shapes shared by policies, the runner and records: the
// tool catalog as a model sees it and the committed messages of an episode.
// Field names follow the dataset card (snake_case) because these objects are
// written into records unchanged.

import type { JsonObject } from './json-value.js';
import type { FieldError } from './schema-validator.js';

export interface ToolDescriptor {
  name: string;
  description: string;
  input_schema: JsonObject;
  output_schema?: JsonObject;
  /** MCP tool annotations (readOnlyHint, destructiveHint, ...), when the server gives them. */
  annotations?: JsonObject;
}

export interface ToolCall {
  /** Normalised per episode (`call_1`, `call_2`, ...), never a random id. */
  id: string;
  name: string;
  /** Exactly what the policy produced, which may be wrongly typed on purpose. */
  arguments: unknown;
}

export type ToolErrorKind =
  | 'invalid_arguments'
  | 'unknown_tool'
  | 'malformed_tool_call'
  | 'tool_error'
  | 'jsonrpc_error'
  | 'timeout'
  | 'transport_error'
  | 'invalid_result'
  | 'result_too_large'
  | 'tool_call_limit';

export interface ToolResult {
  ok: boolean;
  /** One line a person can read: `limit: expected integer, got string`. */
  error?: string;
  kind?: ToolErrorKind;
  /** Every field error, when arguments were rejected. */
  errors?: FieldError[];
  /** The JSON-RPC error code, when the server answered with one. */
  code?: number;
}

export interface SystemMessage {
  role: 'system';
  content: string;
}

export interface UserMessage {
  role: 'user';
  content: string;
}

export interface AssistantMessage {
  role: 'assistant';
  content: string;
  tool_calls?: ToolCall[];
  /** Set when the turn tried to call a tool but could not be parsed as a call. */
  malformed_tool_call?: { reason: string };
}

export interface ToolMessage {
  role: 'tool';
  /** Null when answering a malformed call, which has no id. */
  tool_call_id: string | null;
  name: string | null;
  /** The text reinjected into the conversation, exactly as the model sees it. */
  content: string;
  tool_result: ToolResult;
}

export type Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage;
