// Owns Mistral's v0.3 tool syntax: [INST] turns, the tool catalog in
// [AVAILABLE_TOOLS] just before the last user turn (which also carries the
// system message), calls as a JSON list after [TOOL_CALLS] (several calls of
// a turn are several items of the one list), and results in [TOOL_RESULTS]
// blocks, one a result, in the calls' order. Mistral's tokenizer rejects call
// ids that are not nine alphanumeric characters, so our `call_N` ids are
// mapped to that shape.

import type { Message, ToolDescriptor } from '../../core/conversation.js';
import { sha256Hex } from '../../core/hashing.js';
import { isJsonObject } from '../../core/json-value.js';
import { callsAction, type Action, type MalformedToolCall, type ToolCallRequest } from '../model-action.js';
import type { ModelCodec } from './model-codec.js';
import { decodeJsonObject, jsonTypeName, notAnObject, parseJson, pythonJson } from './python-json.js';

const END = '</s>';
const TOOL_CALLS = '[TOOL_CALLS]';

/** `call_1` → `call00001`; the answer to a malformed call (no id) → `call00000`. */
export function mistralCallId(id: string | null): string {
  if (id === null) return 'call00000';
  const numbered = /^call_(\d{1,5})$/.exec(id);
  if (numbered) return 'call' + numbered[1]!.padStart(5, '0');
  // Not an id the runner makes; a digest still gives nine alphanumerics and keeps a call and its result paired.
  return sha256Hex(id).slice(0, 9);
}

function render(messages: readonly Message[], tools: readonly ToolDescriptor[]): string {
  const first = messages[0];
  const hasSystem = first?.role === 'system';
  const turns = hasSystem ? messages.slice(1) : messages;
  const lastUser = turns.findLastIndex((message) => message.role === 'user');
  const catalog = tools.length
    ? `[AVAILABLE_TOOLS] ${pythonJson(tools.map((tool) => ({ type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.input_schema } })))}[/AVAILABLE_TOOLS]`
    : '';
  let prompt = '<s>';
  turns.forEach((message, index) => {
    switch (message.role) {
      case 'user':
        if (index === lastUser) prompt += catalog + '[INST] ' + (hasSystem ? first.content + '\n\n' : '') + message.content + '[/INST]';
        else prompt += `[INST] ${message.content}[/INST]`;
        break;
      case 'system':
        // The template knows only a leading system message; a later one is an instruction like a user's.
        prompt += `[INST] ${message.content}[/INST]`;
        break;
      case 'assistant': {
        const calls = message.tool_calls ?? [];
        if (calls.length) prompt += `${TOOL_CALLS} ${pythonJson(calls.map((call) => ({ name: call.name, arguments: call.arguments, id: mistralCallId(call.id) })))}${END}`;
        else prompt += ` ${message.content}${END}`;
        break;
      }
      case 'tool':
        prompt += `[TOOL_RESULTS] ${pythonJson({ content: message.content, call_id: mistralCallId(message.tool_call_id) })}[/TOOL_RESULTS]`;
        break;
    }
  });
  // No generation prompt: the model continues straight after [/INST] or [/TOOL_RESULTS].
  return prompt;
}

function malformed(raw: string, reason: string): MalformedToolCall {
  return { kind: 'malformed_tool_call', raw, reason };
}

function parse(text: string): Action {
  let body = text.trim();
  if (body.endsWith(END)) body = body.slice(0, -END.length).trim();
  const marker = body.indexOf(TOOL_CALLS);
  if (marker < 0) return { kind: 'final_text', text: body };
  const preamble = body.slice(0, marker).trim();
  const parsed = parseJson(body.slice(marker + TOOL_CALLS.length));
  if (!parsed.ok) return malformed(text, `${TOOL_CALLS} is not followed by valid JSON: ${parsed.error}`);
  // The list is the family's form; a lone object is read as a list of one.
  const list = Array.isArray(parsed.value) ? parsed.value : [parsed.value];
  if (list.length === 0) return malformed(text, `${TOOL_CALLS} holds an empty list`);
  const calls: ToolCallRequest[] = [];
  for (const [index, call] of list.entries()) {
    // A list of one keeps the reasons records have always had; of several, the reason says which.
    const label = list.length > 1 ? `${TOOL_CALLS} call ${index + 1} of ${list.length}` : `${TOOL_CALLS} call`;
    if (!isJsonObject(call)) return malformed(text, `${label} is ${jsonTypeName(call)}, not an object`);
    const name = call['name'];
    if (typeof name !== 'string' || name === '') return malformed(text, `${label} has no "name" string`);
    const given = call['arguments'];
    const args = given === undefined ? {} : decodeJsonObject(given);
    if (args === undefined) return malformed(text, `${label}'s "arguments" is ${notAnObject(given)}`);
    calls.push({ name, arguments: args });
  }
  return callsAction(calls, preamble);
}

export const mistralCodec: ModelCodec = {
  name: 'mistral',
  families: ['mistral', 'mixtral'],
  stop: [END],
  generationPrompt: '',
  render,
  parse,
};
