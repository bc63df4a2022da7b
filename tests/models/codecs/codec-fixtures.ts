// Holds the conversation every codec's pinned render is written against: a
// wrongly typed call and its rejection, the repaired call, a call answered by a
// tool error, a malformed turn answered without a call id, and a final answer.

import type { Message, ToolDescriptor } from '../../../src/core/conversation.js';

export const searchTool: ToolDescriptor = {
  name: 'search_issues',
  description: 'Search issues by text.',
  input_schema: { type: 'object', properties: { query: { type: 'string' }, limit: { type: 'integer' } }, required: ['query'] },
};

export const closeTool: ToolDescriptor = {
  name: 'close_issue',
  description: 'Close an issue (fails if it is "locked").',
  input_schema: { type: 'object', properties: { number: { type: 'integer' } }, required: ['number'] },
};

export const TOOLS: ToolDescriptor[] = [searchTool, closeTool];

export const SYSTEM = 'You are a careful issue-tracker assistant.';

/** Raw text of a turn that tried to call a tool and could not be parsed. */
export const MALFORMED_RAW = '<tool_call>{"name": "close_issue", "arguments": {"number": 4821, "force": tru}}</tool_call>';

/** A tool result holding quotes, an escaped quote and non-ASCII text. */
export const SEARCH_RESULT = String.raw`{"issues":[{"number":4821,"title":"Login fails for \"ops\" — é"}],"total":1}`;

export const CONVERSATION: Message[] = [
  { role: 'system', content: SYSTEM },
  { role: 'user', content: 'Close the login bug.' },
  { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', name: 'search_issues', arguments: { query: 'login', limit: 'twenty' } }] },
  {
    role: 'tool',
    tool_call_id: 'call_1',
    name: 'search_issues',
    content: 'limit: expected integer, got string',
    tool_result: { ok: false, kind: 'invalid_arguments', error: 'limit: expected integer, got string' },
  },
  { role: 'assistant', content: '', tool_calls: [{ id: 'call_2', name: 'search_issues', arguments: { query: 'login', limit: 20 } }] },
  { role: 'tool', tool_call_id: 'call_2', name: 'search_issues', content: SEARCH_RESULT, tool_result: { ok: true } },
  { role: 'assistant', content: 'Closing it now.', tool_calls: [{ id: 'call_3', name: 'close_issue', arguments: { number: 4821 } }] },
  { role: 'tool', tool_call_id: 'call_3', name: 'close_issue', content: 'issue 4821 is locked', tool_result: { ok: false, kind: 'tool_error', error: 'issue 4821 is locked' } },
  { role: 'assistant', content: MALFORMED_RAW, malformed_tool_call: { reason: '<tool_call> is not valid JSON' } },
  {
    role: 'tool',
    tool_call_id: null,
    name: null,
    content: 'malformed tool call: <tool_call> is not valid JSON',
    tool_result: { ok: false, kind: 'malformed_tool_call', error: '<tool_call> is not valid JSON' },
  },
  { role: 'assistant', content: 'Issue 4821 is locked, so I could not close it.' },
];

/** A system message and one user message, rendered without tools. */
export const SHORT: Message[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Hi' },
];

/** One turn of two calls with words before them, the two results (one a tool error), then the answer. */
export const PARALLEL: Message[] = [
  { role: 'system', content: SYSTEM },
  { role: 'user', content: 'Find the login bug and close #7.' },
  {
    role: 'assistant',
    content: 'Doing both.',
    tool_calls: [
      { id: 'call_1', name: 'search_issues', arguments: { query: 'login', limit: 5 } },
      { id: 'call_2', name: 'close_issue', arguments: { number: 7 } },
    ],
  },
  { role: 'tool', tool_call_id: 'call_1', name: 'search_issues', content: SEARCH_RESULT, tool_result: { ok: true } },
  { role: 'tool', tool_call_id: 'call_2', name: 'close_issue', content: 'issue 7 is locked', tool_result: { ok: false, kind: 'tool_error', error: 'issue 7 is locked' } },
  { role: 'assistant', content: 'Found #4821; #7 is locked.' },
];
