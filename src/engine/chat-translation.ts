// Owns turning a chat request of either wire protocol (Ollama's /api/chat,
// OpenAI's /v1/chat/completions) into the conversation the model family's
// codec renders, and the codec's reading of the model's text back into what
// each protocol answers: text, or tool calls with their arguments. The codec
// is the one the factory's raw mode uses, so a served model sees exactly the
// template text it was trained on and its calls are read by the same parser.

import { createHash } from 'node:crypto';
import type { Message, ToolCall, ToolDescriptor } from '../core/conversation.js';
import { isJsonObject, type JsonObject } from '../core/json-value.js';
import type { ModelCodec } from '../models/codecs/model-codec.js';
import { parseArguments } from '../models/message-translation.js';
import type { ToolCallRequest } from '../models/model-action.js';

/** A request that cannot be served: its field and what is wrong with it, answered as HTTP 400. */
export class BadRequest extends Error {}

type Loose = Record<string, unknown>;

const isLoose = (value: unknown): value is Loose => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Message content as text: a string, or (OpenAI) a list of parts whose text parts are joined. */
function contentText(content: unknown, where: string): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part, index) => {
        if (isLoose(part) && part.type === 'text' && typeof part.text === 'string') return part.text;
        throw new BadRequest(`${where}.content[${index}] is not a text part: this engine serves text-only models`);
      })
      .join('');
  }
  throw new BadRequest(`${where}.content must be a string`);
}

export function toolsOf(tools: unknown): ToolDescriptor[] {
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) throw new BadRequest('tools must be a list');
  return tools.map((tool, index) => {
    const definition = isLoose(tool) && isLoose(tool.function) ? tool.function : undefined;
    if (!definition || typeof definition.name !== 'string' || definition.name === '') throw new BadRequest(`tools[${index}] needs a function with a name ({"type": "function", "function": {"name": ...}})`);
    const parameters = isJsonObject(definition.parameters as never) ? (definition.parameters as JsonObject) : { type: 'object', properties: {} };
    return { name: definition.name, description: typeof definition.description === 'string' ? definition.description : '', input_schema: parameters };
  });
}

/** The messages of either protocol as the codec's conversation. Tool results are matched to calls by position, as the templates do. */
export function messagesOf(messages: unknown): Message[] {
  if (!Array.isArray(messages)) throw new BadRequest('messages must be a list');
  let calls = 0;
  return messages.map((message, index): Message => {
    const where = `messages[${index}]`;
    if (!isLoose(message)) throw new BadRequest(`${where} must be an object`);
    const content = contentText(message.content, where);
    switch (message.role) {
      case 'system':
      case 'developer':
        return { role: 'system', content };
      case 'user':
        return { role: 'user', content };
      case 'assistant': {
        const given = Array.isArray(message.tool_calls) ? message.tool_calls : [];
        if (given.length === 0) return { role: 'assistant', content };
        const toolCalls: ToolCall[] = given.map((call, callIndex) => {
          const definition = isLoose(call) && isLoose(call.function) ? call.function : undefined;
          if (!definition || typeof definition.name !== 'string') throw new BadRequest(`${where}.tool_calls[${callIndex}] needs a function with a name`);
          calls++;
          return { id: isLoose(call) && typeof call.id === 'string' ? call.id : `call_${calls}`, name: definition.name, arguments: parseArguments(definition.arguments) };
        });
        return { role: 'assistant', content, tool_calls: toolCalls };
      }
      case 'tool': {
        const name = typeof message.tool_name === 'string' ? message.tool_name : typeof message.name === 'string' ? message.name : null;
        return { role: 'tool', tool_call_id: typeof message.tool_call_id === 'string' ? message.tool_call_id : null, name, content, tool_result: { ok: true } };
      }
      default:
        throw new BadRequest(`${where}.role must be system, user, assistant or tool (got ${JSON.stringify(message.role)})`);
    }
  });
}

/** What the model's turn says, read by the codec: its calls (if any) and the text around them. */
export interface ReadTurn {
  /** Text to answer as content: the words before the calls, or the whole text when there are none. */
  content: string;
  calls: ToolCallRequest[];
}

export function readTurn(codec: ModelCodec, text: string): ReadTurn {
  const action = codec.parse(text);
  switch (action.kind) {
    case 'tool_call':
      return { content: action.text ?? '', calls: [{ name: action.name, arguments: action.arguments }] };
    case 'tool_calls':
      return { content: action.text ?? '', calls: action.calls.map((call) => ({ name: call.name, arguments: call.arguments })) };
    default:
      // Plain text, or a call the codec could not read: the client gets the model's words as they were, as Ollama answers when its parser finds no call.
      return { content: text, calls: [] };
  }
}

/** Where a call may be starting in streamed text: from there on, text is held until the turn is read whole. */
export function callStart(text: string, opening: string): number {
  const at = text.indexOf(opening);
  if (at >= 0) return at;
  for (let length = Math.min(opening.length - 1, text.length); length > 0; length--) if (text.endsWith(opening.slice(0, length))) return text.length - length;
  return -1;
}

/** A call id that depends only on what was asked and answered, so the same turn gets the same id. */
export function callId(seed: string, index: number): string {
  return `call_${createHash('sha256').update(`${seed}\n${index}`).digest('hex').slice(0, 24)}`;
}
