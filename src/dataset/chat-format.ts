// Owns the conversational form the common trainers read (OpenAI-style chat
// messages with `tool_calls`, tool results as `role: "tool"`, and function
// schemas as `tools`), converted from records. Every message has the same
// keys (null where a key does not apply), so a loader infers one type for the
// column instead of giving up on mixed shapes.

import type { RecordMessage, RecordTool } from '../records/episode-record.js';

export interface ChatToolCall {
  id: string;
  type: 'function';
  /** `arguments` is a JSON-encoded string, as the OpenAI format has it (and as the policy emitted it). */
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  tool_calls: ChatToolCall[] | null;
  tool_call_id: string | null;
  name: string | null;
}

export interface ChatTool {
  type: 'function';
  function: { name: string; description: string; parameters: unknown };
}

function chat(role: ChatMessage['role'], content: string, extra: Partial<Pick<ChatMessage, 'tool_calls' | 'tool_call_id' | 'name'>> = {}): ChatMessage {
  return { role, content, tool_calls: extra.tool_calls ?? null, tool_call_id: extra.tool_call_id ?? null, name: extra.name ?? null };
}

export function toChatMessage(message: RecordMessage): ChatMessage {
  switch (message.role) {
    case 'system':
    case 'user':
      return chat(message.role, message.content);
    case 'assistant': {
      const calls = message.tool_calls?.map((call): ChatToolCall => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }));
      return chat('assistant', message.content, calls ? { tool_calls: calls } : {});
    }
    case 'tool':
      // A malformed call has no id to answer: chat templates need one, so the
      // harness's reply reaches the model as a user turn instead.
      if (message.tool_call_id === null) return chat('user', message.content);
      return chat('tool', message.content, { tool_call_id: message.tool_call_id, name: message.name });
  }
}

export function toChatMessages(messages: readonly RecordMessage[]): ChatMessage[] {
  return messages.map(toChatMessage);
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
