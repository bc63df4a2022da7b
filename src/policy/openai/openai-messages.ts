// Owns how an episode's conversation and tool catalog are written in the
// OpenAI chat-completions shape. Calls keep the runner's normalised ids
// (call_1, …), so every tool message answers the call it belongs to. A
// malformed call has no id to answer: its raw text stays the assistant's
// words and the factory's answer comes back as a user turn, since servers
// reject a tool message that answers no call.

import type { Message, ToolDescriptor } from '../../core/conversation.js';
import type { OpenAIMessage, OpenAITool } from './openai-chat.js';

/** Arguments as the wire carries them: a string the model wrote stays as written (it may not be JSON), anything else is encoded. */
function argumentsText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value ?? {});
}

export function toOpenAIMessage(message: Message): OpenAIMessage {
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

/** A call's arguments as the policy contract takes them: parsed when they are JSON, else the string itself (the runner then answers it as invalid arguments). */
export function parsedArguments(text: string): unknown {
  // Servers send "" for a call with no arguments.
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
