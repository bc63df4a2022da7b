// Owns Llama 3.1 / 3.2 JSON tool calling: the ipython environment in the
// system header, the tool catalog in the first user message, calls as
// <|python_tag|>{"name": ..., "parameters": ...} closed by <|eom_id|>, and
// results in ipython turns, one a result. Llama 3.1 often writes a
// custom-tool call as bare JSON without the tag, so parse accepts both forms.
// Meta's own templates allow one call a turn; several are joined by "; "
// (see render), and parse reads that list back.

import type { Message, ToolCall, ToolDescriptor } from '../../core/conversation.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../../core/json-value.js';
import { callsAction, type Action, type MalformedToolCall, type ToolCallRequest } from '../model-action.js';
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
        // Meta's templates for 3.1 and 3.2 refuse a turn of several calls
        // ("This model only supports single tool-calls at once!"). Several are
        // written as the family's JSON calls joined by "; ", the form vLLM's
        // llama3_json parser reads back and the one parse accepts.
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

interface ReadCall extends ToolCallRequest {
  arguments: JsonObject;
  argumentsGiven: boolean;
}

/**
 * Every call at the start of the text, separated by ";", or why they cannot
 * be read. One call keeps the reasons records have always had ("the call …");
 * of several, the reason says which ("call 2 …"). Missing parameters mean a
 * call without arguments.
 */
function readCalls(text: string): ReadCall[] | { reason: string } {
  const values: JsonValue[] = [];
  let rest = text;
  for (;;) {
    const label = values.length === 0 ? 'the call' : `call ${values.length + 1}`;
    const parsed = parseJsonPrefix(rest);
    if (!parsed.ok) return { reason: `${label} is not valid JSON: ${parsed.error}` };
    values.push(parsed.value);
    const after = rest.slice(parsed.end).trim();
    if (after === '') break;
    if (!after.startsWith(';')) return { reason: `${label} is followed by text that is not another call` };
    rest = after.slice(1).trim();
    // A ";" after the last call ends the list rather than opening an empty call.
    if (rest === '') break;
  }
  const calls: ReadCall[] = [];
  for (const [index, value] of values.entries()) {
    const label = values.length === 1 ? 'the call' : `call ${index + 1}`;
    if (!isJsonObject(value)) return { reason: `${label} is ${jsonTypeName(value)}, not an object` };
    const name = value['name'];
    if (typeof name !== 'string' || name === '') return { reason: `${label} has no "name" string` };
    const key = 'parameters' in value ? 'parameters' : 'arguments';
    const given = value[key];
    const args = given === undefined ? {} : decodeJsonObject(given);
    if (args === undefined) return { reason: `${label}'s "${key}" is ${notAnObject(given)}` };
    calls.push({ name, arguments: args, argumentsGiven: given !== undefined });
  }
  return calls;
}

const request = (call: ReadCall): ToolCallRequest => ({ name: call.name, arguments: call.arguments });

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
    const calls = readCalls(body.slice(tag + PYTHON_TAG.length).trim());
    if ('reason' in calls) return malformed(text, `after ${PYTHON_TAG}, ${calls.reason}`);
    return callsAction(calls.map(request), preamble);
  }
  // Untagged, text that opens like a call is held to being one; other JSON is a call only if it has a name and arguments.
  const claimsCall = /^\{\s*"name"\s*:/.test(body);
  if (!body.startsWith('{')) return { kind: 'final_text', text: body };
  const calls = readCalls(body);
  if ('reason' in calls) return claimsCall ? malformed(text, calls.reason) : { kind: 'final_text', text: body };
  if (!claimsCall && !calls.every((call) => call.argumentsGiven)) return { kind: 'final_text', text: body };
  return callsAction(calls.map(request));
}

export const llama3Codec: ModelCodec = {
  name: 'llama3',
  families: ['llama', 'llama3', 'llama3.1', 'llama3.2'],
  stop: [END_OF_TURN, END_OF_MESSAGE],
  generationPrompt: header('assistant'),
  render,
  parse,
};
