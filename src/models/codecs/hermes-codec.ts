// Owns the Hermes tool syntax that Qwen2.5, Qwen3 and their kin were trained
// on: ChatML turns, the tool catalog in <tools></tools> inside the system turn,
// calls as JSON in <tool_call></tool_call>, and results as <tool_response>
// blocks inside a user turn. The render follows Qwen2.5's chat template byte
// for byte, so a raw prompt is the text the model saw in training: several
// calls of one turn are several blocks, and the results of a run of calls
// share one user turn.

import type { AssistantMessage, Message, ToolDescriptor } from '../../core/conversation.js';
import { isJsonObject } from '../../core/json-value.js';
import { callsAction, type Action, type MalformedToolCall, type ToolCallRequest } from '../model-action.js';
import type { ModelCodec } from './model-codec.js';
import { decodeJsonObject, jsonTypeName, notAnObject, parseJson, pythonJson } from './python-json.js';

const DEFAULT_SYSTEM = 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.';

const TOOLS_OPENING =
  '\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n' +
  'You are provided with function signatures within <tools></tools> XML tags:\n<tools>';

const TOOLS_CLOSING =
  '\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n' +
  '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n';

const END = '<|im_end|>';
const CALL_OPEN = '<tool_call>';
const CALL_CLOSE = '</tool_call>';

function renderSystem(system: string, tools: readonly ToolDescriptor[]): string {
  if (tools.length === 0) return `<|im_start|>system\n${system}${END}\n`;
  const catalog = tools
    .map((tool) => '\n' + pythonJson({ type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.input_schema } }))
    .join('');
  return `<|im_start|>system\n${system}${TOOLS_OPENING}${catalog}${TOOLS_CLOSING}`;
}

function renderAssistant(message: AssistantMessage): string {
  const calls = message.tool_calls ?? [];
  // A malformed call has no tool_calls: its raw text is replayed as the plain turn the model wrote.
  if (calls.length === 0) return `<|im_start|>assistant\n${message.content}${END}\n`;
  const blocks = calls.map((call) => `\n${CALL_OPEN}\n{"name": ${pythonJson(call.name)}, "arguments": ${pythonJson(call.arguments)}}\n${CALL_CLOSE}`);
  return '<|im_start|>assistant' + (message.content ? '\n' + message.content : '') + blocks.join('') + `${END}\n`;
}

function render(messages: readonly Message[], tools: readonly ToolDescriptor[]): string {
  const first = messages[0];
  const hasSystem = first?.role === 'system';
  const turns = hasSystem ? messages.slice(1) : messages;
  let prompt = renderSystem(hasSystem ? first.content : DEFAULT_SYSTEM, tools);
  turns.forEach((message, index) => {
    switch (message.role) {
      case 'system':
      case 'user':
        prompt += `<|im_start|>${message.role}\n${message.content}${END}\n`;
        break;
      case 'assistant':
        prompt += renderAssistant(message);
        break;
      case 'tool':
        // A run of results shares one user turn, as the template groups them.
        if (turns[index - 1]?.role !== 'tool') prompt += '<|im_start|>user';
        prompt += `\n<tool_response>\n${message.content}\n</tool_response>`;
        if (turns[index + 1]?.role !== 'tool') prompt += `${END}\n`;
        break;
    }
  });
  return prompt + '<|im_start|>assistant\n';
}

function malformed(raw: string, reason: string): MalformedToolCall {
  return { kind: 'malformed_tool_call', raw, reason };
}

/** One block's call, or why it is none; `label` names the block in the reason. */
function readCall(inner: string, label: string): ToolCallRequest | { reason: string } {
  const parsed = parseJson(inner);
  if (!parsed.ok) return { reason: `${label} is not valid JSON: ${parsed.error}` };
  const call = parsed.value;
  if (!isJsonObject(call)) return { reason: `${label} holds ${jsonTypeName(call)}, not an object` };
  const name = call['name'];
  if (typeof name !== 'string' || name === '') return { reason: `${label} has no "name" string` };
  const given = call['arguments'];
  const args = given === undefined ? {} : decodeJsonObject(given);
  if (args === undefined) return { reason: `${label} "arguments" is ${notAnObject(given)}` };
  return { name, arguments: args };
}

function parse(text: string): Action {
  let body = text.trim();
  if (body.endsWith(END)) body = body.slice(0, -END.length).trim();
  const open = body.indexOf(CALL_OPEN);
  if (open < 0) return { kind: 'final_text', text: body };
  const preamble = body.slice(0, open).trim();
  // Each call is its own block, as the template writes several. Only the words
  // before the first block are kept: the template has no place for text
  // between or after calls, so a re-rendered turn could not hold it.
  const blocks: (string | undefined)[] = [];
  for (let at = open; at >= 0; ) {
    const start = at + CALL_OPEN.length;
    const close = body.indexOf(CALL_CLOSE, start);
    if (close < 0) {
      blocks.push(undefined);
      break;
    }
    blocks.push(body.slice(start, close));
    at = body.indexOf(CALL_OPEN, close + CALL_CLOSE.length);
  }
  const calls: ToolCallRequest[] = [];
  for (const [index, inner] of blocks.entries()) {
    // One block keeps the reasons records have always had; of several, the reason says which.
    const label = blocks.length > 1 ? `${CALL_OPEN} ${index + 1} of ${blocks.length}` : CALL_OPEN;
    if (inner === undefined) return malformed(text, `unterminated ${label}`);
    const call = readCall(inner, label);
    if ('reason' in call) return malformed(text, call.reason);
    calls.push(call);
  }
  return callsAction(calls, preamble);
}

export const hermesCodec: ModelCodec = {
  name: 'hermes',
  families: ['qwen2', 'qwen2.5', 'qwen3', 'qwen'],
  stop: [END],
  generationPrompt: '<|im_start|>assistant\n',
  render,
  parse,
};
