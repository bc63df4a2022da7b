// Owns translating a conversation between the record's shape and a
// provider's wire shape, both ways, and the one lenient reading of a call's
// arguments that every reader of a wire uses (the providers, the engine,
// env serve). Ollama's /api/chat takes arguments as objects and a tool
// result's tool_name; OpenAI's chat completions take arguments as JSON text
// and answer calls by id. Calls keep the runner's normalised ids (call_1, …),
// so every OpenAI tool message answers the call it belongs to. A malformed
// call has no id to answer: its raw text stays the assistant's words and the
// factory's answer comes back as a user turn, since servers reject a tool
// message that answers no call.

import type { Message as OllamaMessage, Tool as OllamaTool } from 'ollama';
import type { Message, ToolDescriptor } from '../core/conversation.js';
import { isJsonObject } from '../core/json-value.js';
import type { OpenAIMessage, OpenAITool } from './openai/chat-completion.js';

/**
 * A call's arguments as the record takes them, from whatever a wire carried:
 * absent or blank is no arguments (servers send "" for a call without any),
 * a string is parsed when it is JSON and kept as the text the model wrote
 * when it is not (the runner then answers it as invalid arguments), and
 * anything else is kept as it came.
 */
export function parseArguments(value: unknown): unknown {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'string') return value;
  if (value.trim() === '') return {};
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

/** Arguments as the OpenAI wire carries them: a string the model wrote stays as written (it may not be JSON), anything else is encoded. */
function argumentsText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value ?? {});
}

function toOpenAIMessage(message: Message): OpenAIMessage {
  switch (message.role) {
    case 'system':
    case 'user':
      return { role: message.role, content: message.content };
    case 'assistant':
      return message.tool_calls && message.tool_calls.length > 0
        ? {
            role: 'assistant',
            content: message.content === '' ? null : message.content,
            tool_calls: message.tool_calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: argumentsText(call.arguments) } })),
          }
        : { role: 'assistant', content: message.content };
    case 'tool':
      return message.tool_call_id === null ? { role: 'user', content: message.content } : { role: 'tool', tool_call_id: message.tool_call_id, content: message.content };
  }
}

export function toOpenAIMessages(messages: readonly Message[]): OpenAIMessage[] {
  return messages.map(toOpenAIMessage);
}

export function toOpenAITool(tool: ToolDescriptor): OpenAITool {
  return { type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.input_schema } };
}

export function toOllamaMessage(message: Message): OllamaMessage {
  switch (message.role) {
    case 'system':
    case 'user':
      return { role: message.role, content: message.content };
    case 'assistant':
      return message.tool_calls
        ? {
            role: 'assistant',
            content: message.content,
            tool_calls: message.tool_calls.map((call) => ({ function: { name: call.name, arguments: isJsonObject(call.arguments) ? call.arguments : {} } })),
          }
        : { role: 'assistant', content: message.content };
    case 'tool':
      return { role: 'tool', content: message.content, ...(message.name ? { tool_name: message.name } : {}) };
  }
}

export function toOllamaTool(tool: ToolDescriptor): OllamaTool {
  return { type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.input_schema as OllamaTool['function']['parameters'] } };
}
