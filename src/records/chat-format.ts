// Owns the conversational form the common trainers read (OpenAI-style chat
// messages with `tool_calls`, tool results as `role: "tool"`, and function
// schemas as `tools`), converted from records. A message carries only the keys
// that apply to it (no `tool_calls: null` on a user turn): chat templates such
// as Llama 3.1's and DeepSeek-V3's test whether a key is there, not whether it
// is null, and the dataset card declares each message as a JSON value so that
// a loader gives it back exactly as written instead of padding it.
//
// Tool-call arguments come in two forms, because chat templates disagree:
// "string" is the OpenAI wire shape (a JSON-encoded string, exactly as the
// policy emitted it), which templates that print the arguments verbatim need
// (DeepSeek-V3); "object" is the parsed JSON object, which templates that
// apply `tojson` to the arguments need (Qwen2.5, Llama 3.1, gpt-oss), since a
// string there comes out encoded twice.

import { isJsonObject, type JsonObject } from '../core/json-value.js';
import type { RecordMessage, RecordTool } from './episode-record.js';

export const ARGUMENT_FORMS = ['string', 'object'] as const;
export type ArgumentsForm = (typeof ARGUMENT_FORMS)[number];

export interface ChatToolCall {
  id: string;
  type: 'function';
  /**
   * A JSON-encoded string in the "string" form; in the "object" form the
   * parsed object, or, when the policy emitted something that is not a JSON
   * object (a model's malformed call), that text unchanged.
   */
  function: { name: string; arguments: string | JsonObject };
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  /** Assistant turns that call tools. */
  tool_calls?: ChatToolCall[];
  /** Tool results: the call answered and the tool's name. */
  tool_call_id?: string;
  name?: string;
}

export interface ChatTool {
  type: 'function';
  function: { name: string; description: string; parameters: unknown };
}

function chat(role: ChatMessage['role'], content: string, extra: Pick<ChatMessage, 'tool_calls' | 'tool_call_id' | 'name'> = {}): ChatMessage {
  return { role, content, ...extra };
}

/** The arguments in the asked-for form; text that is not a JSON object stays text, so nothing the policy emitted is repaired. */
export function chatArguments(text: string, form: ArgumentsForm): ChatToolCall['function']['arguments'] {
  if (form === 'string') return text;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return text;
  }
  return isJsonObject(value) ? value : text;
}

export function toChatMessage(message: RecordMessage, form: ArgumentsForm = 'string'): ChatMessage {
  switch (message.role) {
    case 'system':
    case 'user':
      return chat(message.role, message.content);
    case 'assistant': {
      const calls = message.tool_calls?.map((call): ChatToolCall => ({ id: call.id, type: 'function', function: { name: call.name, arguments: chatArguments(call.arguments, form) } }));
      return chat('assistant', message.content, calls && calls.length > 0 ? { tool_calls: calls } : {});
    }
    case 'tool':
      // A malformed call has no id to answer: chat templates need one, so the
      // harness's reply reaches the model as a user turn instead.
      if (message.tool_call_id === null) return chat('user', message.content);
      return chat('tool', message.content, { tool_call_id: message.tool_call_id, ...(message.name === null ? {} : { name: message.name }) });
  }
}

export function toChatMessages(messages: readonly RecordMessage[], form: ArgumentsForm = 'string'): ChatMessage[] {
  return messages.map((message) => toChatMessage(message, form));
}

/** Calls whose arguments stayed text in the "object" form: the policy emitted something that is not a JSON object. */
export function textArguments(messages: readonly ChatMessage[]): number {
  let count = 0;
  for (const message of messages) for (const call of message.tool_calls ?? []) if (typeof call.function.arguments === 'string') count++;
  return count;
}

export function toChatTool(tool: RecordTool): ChatTool {
  return { type: 'function', function: { name: tool.name, description: tool.description, parameters: JSON.parse(tool.input_schema) as unknown } };
}

/** Every tool the episode could call: the first catalog plus any that appeared mid-episode (a renamed tool). */
export function toChatTools(tools: readonly RecordTool[], updates: readonly { added: RecordTool[] }[] = []): ChatTool[] {
  const byName = new Map<string, RecordTool>();
  for (const tool of [...tools, ...updates.flatMap((update) => update.added)]) byName.set(tool.name, tool);
  return [...byName.values()].map(toChatTool);
}
