// Owns Llama 3.1 / 3.2 JSON tool calling: the ipython environment in the
// system header, the tool catalog in the first user message, calls as
// <|python_tag|>{"name": ..., "parameters": ...} closed by <|eom_id|>, and
// results in ipython turns. Llama 3.1 often writes a custom-tool call as bare
// JSON without the tag, so parse accepts both forms.

import type { Message, ToolCall, ToolDescriptor } from '../../core/conversation.js';
import { isJsonObject, type JsonObject } from '../../core/json-value.js';
import type { Action, MalformedToolCall } from '../policy-contract.js';
import type { ModelCodec } from './model-codec.js';
import { decodeJsonObject, jsonTypeName, notAnObject, parseJsonPrefix, pythonJson, pythonJsonIndented } from './python-json.js';

const PYTHON_TAG = '<|python_tag|>';
const END_OF_TURN = '<|eot_id|>';
const END_OF_MESSAGE = '<|eom_id|>';

const TOOLS_PREAMBLE =
  'Given the following functions, please respond with a JSON for a function call with its proper arguments that best answers the given prompt.\n\n' +
  'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.Do not use variables.\n\n';

function header(role: string): string {
  return `<|start_header_id|>${role}<|end_header_id|>\n\n`;
}

function renderCall(call: ToolCall): string {
  return `{"name": ${pythonJson(call.name)}, "parameters": ${pythonJson(call.arguments)}}`;
}

function render(messages: readonly Message[], tools: readonly ToolDescriptor[]): string {
  const first = messages[0];
  const hasSystem = first?.role === 'system';
  const turns = hasSystem ? messages.slice(1) : messages;
  // The template announces the ipython environment only when there are tools to call.
  let prompt =
    '<|begin_of_text|>' +
    header('system') +
    (tools.length ? 'Environment: ipython\n' : '') +
    'Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n' +
    (hasSystem ? first.content : '') +
    END_OF_TURN;
  const catalog = tools.length
    ? TOOLS_PREAMBLE + tools.map((tool) => pythonJsonIndented({ type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.input_schema } }) + '\n\n').join('')
    : '';
  const firstUser = turns.findIndex((message) => message.role === 'user');
  turns.forEach((message, index) => {
    switch (message.role) {
      case 'system':
        prompt += header('system') + message.content + END_OF_TURN;
        break;
      case 'user':
        prompt += header('user') + (index === firstUser ? catalog : '') + message.content + END_OF_TURN;
        break;
      case 'assistant': {
        const calls = message.tool_calls ?? [];
        // The family calls one tool a turn; should a record hold more, "; " is how Llama writes a list of JSON calls.
        if (calls.length) prompt += header('assistant') + PYTHON_TAG + calls.map(renderCall).join('; ') + END_OF_MESSAGE;
        else prompt += header('assistant') + message.content + END_OF_TURN;
        break;
      }
      case 'tool':
        prompt += header('ipython') + message.content + END_OF_TURN;
        break;
    }
  });
  return prompt + header('assistant');
}

function malformed(raw: string, reason: string): MalformedToolCall {
  return { kind: 'malformed_tool_call', raw, reason };
}

type ReadCall = { name: string; arguments: JsonObject; argumentsGiven: boolean } | { reason: string };

/** The first call at the start of the text, or why there is none. Missing parameters mean a call without arguments. */
function readFirstCall(text: string): ReadCall {
  const parsed = parseJsonPrefix(text);
  if (!parsed.ok) return { reason: `the call is not valid JSON: ${parsed.error}` };
  // Further calls follow a ";"; only the first is used, one call a step.
  const after = text.slice(parsed.end).trim();
  if (after && !after.startsWith(';')) return { reason: 'the call is followed by text that is not another call' };
  const value = parsed.value;
  if (!isJsonObject(value)) return { reason: `the call is ${jsonTypeName(value)}, not an object` };
  const name = value['name'];
  if (typeof name !== 'string' || name === '') return { reason: 'the call has no "name" string' };
  const key = 'parameters' in value ? 'parameters' : 'arguments';
  const given = value[key];
  const args = given === undefined ? {} : decodeJsonObject(given);
  if (args === undefined) return { reason: `the call's "${key}" is ${notAnObject(given)}` };
  return { name, arguments: args, argumentsGiven: given !== undefined };
}

function stripEnd(text: string): string {
  let body = text.trim();
  for (const end of [END_OF_TURN, END_OF_MESSAGE]) if (body.endsWith(end)) body = body.slice(0, -end.length).trim();
  return body;
}

function parse(text: string): Action {
  const body = stripEnd(text);
  const tag = body.indexOf(PYTHON_TAG);
  if (tag >= 0) {
    const preamble = body.slice(0, tag).trim();
    const call = readFirstCall(body.slice(tag + PYTHON_TAG.length).trim());
    if ('reason' in call) return malformed(text, `after ${PYTHON_TAG}, ${call.reason}`);
    return { kind: 'tool_call', name: call.name, arguments: call.arguments, ...(preamble ? { text: preamble } : {}) };
  }
  // Untagged, text that opens like a call is held to being one; other JSON is a call only if it has a name and arguments.
  const claimsCall = /^\{\s*"name"\s*:/.test(body);
  if (!body.startsWith('{')) return { kind: 'final_text', text: body };
  const call = readFirstCall(body);
  if ('reason' in call) return claimsCall ? malformed(text, call.reason) : { kind: 'final_text', text: body };
  if (!claimsCall && !call.argumentsGiven) return { kind: 'final_text', text: body };
  return { kind: 'tool_call', name: call.name, arguments: call.arguments };
}

export const llama3Codec: ModelCodec = {
  name: 'llama3',
  families: ['llama', 'llama3', 'llama3.1', 'llama3.2'],
  stop: [END_OF_TURN, END_OF_MESSAGE],
  generationPrompt: header('assistant'),
  render,
  parse,
};
