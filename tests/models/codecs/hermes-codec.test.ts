import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Message } from '../../../src/core/conversation.js';
import { hermesCodec } from '../../../src/models/codecs/hermes-codec.js';
import { CONVERSATION, PARALLEL, SEARCH_RESULT, SHORT, TOOLS } from './codec-fixtures.js';

// Written by hand from Qwen2.5's chat template; a changed byte here is a changed prompt.
const PINNED = String.raw`<|im_start|>system
You are a careful issue-tracker assistant.

# Tools

You may call one or more functions to assist with the user query.

You are provided with function signatures within <tools></tools> XML tags:
<tools>
{"type": "function", "function": {"name": "search_issues", "description": "Search issues by text.", "parameters": {"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["query"]}}}
{"type": "function", "function": {"name": "close_issue", "description": "Close an issue (fails if it is \"locked\").", "parameters": {"type": "object", "properties": {"number": {"type": "integer"}}, "required": ["number"]}}}
</tools>

For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:
<tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call><|im_end|>
<|im_start|>user
Close the login bug.<|im_end|>
<|im_start|>assistant
<tool_call>
{"name": "search_issues", "arguments": {"query": "login", "limit": "twenty"}}
</tool_call><|im_end|>
<|im_start|>user
<tool_response>
limit: expected integer, got string
</tool_response><|im_end|>
<|im_start|>assistant
<tool_call>
{"name": "search_issues", "arguments": {"query": "login", "limit": 20}}
</tool_call><|im_end|>
<|im_start|>user
<tool_response>
{"issues":[{"number":4821,"title":"Login fails for \"ops\" — é"}],"total":1}
</tool_response><|im_end|>
<|im_start|>assistant
Closing it now.
<tool_call>
{"name": "close_issue", "arguments": {"number": 4821}}
</tool_call><|im_end|>
<|im_start|>user
<tool_response>
issue 4821 is locked
</tool_response><|im_end|>
<|im_start|>assistant
<tool_call>{"name": "close_issue", "arguments": {"number": 4821, "force": tru}}</tool_call><|im_end|>
<|im_start|>user
<tool_response>
malformed tool call: <tool_call> is not valid JSON
</tool_response><|im_end|>
<|im_start|>assistant
Issue 4821 is locked, so I could not close it.<|im_end|>
<|im_start|>assistant
`;

describe('hermes codec: render', () => {
  it('renders the pinned conversation byte for byte', () => {
    assert.equal(hermesCodec.render(CONVERSATION, TOOLS), PINNED);
  });

  it('renders without tools as plain ChatML', () => {
    assert.equal(hermesCodec.render(SHORT, []), '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n');
  });

  it("uses Qwen's default system message when the conversation has none", () => {
    assert.equal(
      hermesCodec.render([{ role: 'user', content: 'Hi' }], []),
      '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n',
    );
  });

  it('puts a run of tool results in one user turn', () => {
    const messages: Message[] = [
      { role: 'user', content: 'Close 1 and 2.' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          { id: 'call_1', name: 'close_issue', arguments: { number: 1 } },
          { id: 'call_2', name: 'close_issue', arguments: { number: 2 } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', name: 'close_issue', content: 'closed 1', tool_result: { ok: true } },
      { role: 'tool', tool_call_id: 'call_2', name: 'close_issue', content: 'closed 2', tool_result: { ok: true } },
    ];
    assert.equal(
      hermesCodec.render(messages, []),
      '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n' +
        '<|im_start|>user\nClose 1 and 2.<|im_end|>\n' +
        '<|im_start|>assistant\n<tool_call>\n{"name": "close_issue", "arguments": {"number": 1}}\n</tool_call>\n<tool_call>\n{"name": "close_issue", "arguments": {"number": 2}}\n</tool_call><|im_end|>\n' +
        '<|im_start|>user\n<tool_response>\nclosed 1\n</tool_response>\n<tool_response>\nclosed 2\n</tool_response><|im_end|>\n' +
        '<|im_start|>assistant\n',
    );
  });
});

describe('hermes codec: render of several calls in one turn', () => {
  it('writes one block per call after the words, and the results in one user turn, as the Qwen2.5 template does', () => {
    // Checked against the Qwen2.5 template (TRL's copy, trl/chat_templates/qwen2_5.jinja) rendered by jinja2.
    assert.equal(
      hermesCodec.render(PARALLEL.slice(1), []),
      '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n' +
        '<|im_start|>user\nFind the login bug and close #7.<|im_end|>\n' +
        '<|im_start|>assistant\nDoing both.\n<tool_call>\n{"name": "search_issues", "arguments": {"query": "login", "limit": 5}}\n</tool_call>\n' +
        '<tool_call>\n{"name": "close_issue", "arguments": {"number": 7}}\n</tool_call><|im_end|>\n' +
        '<|im_start|>user\n<tool_response>\n' +
        SEARCH_RESULT +
        '\n</tool_response>\n<tool_response>\nissue 7 is locked\n</tool_response><|im_end|>\n' +
        '<|im_start|>assistant\nFound #4821; #7 is locked.<|im_end|>\n' +
        '<|im_start|>assistant\n',
    );
  });
});

describe('hermes codec: parse', () => {
  const malformed = (raw: string, reason: string) => assert.deepEqual(hermesCodec.parse(raw), { kind: 'malformed_tool_call', raw, reason });

  it('reads text without a call as the final answer, trimmed and without <|im_end|>', () => {
    assert.deepEqual(hermesCodec.parse('  Issue 4821 is closed.\n<|im_end|>\n'), { kind: 'final_text', text: 'Issue 4821 is closed.' });
  });

  it('reads a clean call', () => {
    assert.deepEqual(hermesCodec.parse('<tool_call>\n{"name": "search_issues", "arguments": {"query": "login", "limit": 20}}\n</tool_call><|im_end|>'), {
      kind: 'tool_call',
      name: 'search_issues',
      arguments: { query: 'login', limit: 20 },
    });
  });

  it('keeps the words before the call as its text', () => {
    assert.deepEqual(hermesCodec.parse('Let me search.\n\n<tool_call>\n{"name": "search_issues", "arguments": {"query": "login"}}\n</tool_call>'), {
      kind: 'tool_call',
      name: 'search_issues',
      arguments: { query: 'login' },
      text: 'Let me search.',
    });
  });

  it('decodes arguments written as a string holding a JSON object', () => {
    assert.deepEqual(hermesCodec.parse(String.raw`<tool_call>{"name": "search_issues", "arguments": "{\"query\": \"login\", \"limit\": 5}"}</tool_call>`), {
      kind: 'tool_call',
      name: 'search_issues',
      arguments: { query: 'login', limit: 5 },
    });
  });

  it('reads a call without arguments as a call with none', () => {
    assert.deepEqual(hermesCodec.parse('<tool_call>{"name": "list_issues"}</tool_call>'), { kind: 'tool_call', name: 'list_issues', arguments: {} });
  });

  it('keeps wrongly typed argument values exactly as written', () => {
    assert.deepEqual(hermesCodec.parse('<tool_call>{"name": "search_issues", "arguments": {"query": "login", "limit": "twenty"}}</tool_call>'), {
      kind: 'tool_call',
      name: 'search_issues',
      arguments: { query: 'login', limit: 'twenty' },
    });
  });

  it('reads several blocks as one turn of several calls, in order, with the words before them', () => {
    const first = '<tool_call>\n{"name": "close_issue", "arguments": {"number": 1}}\n</tool_call>';
    const second = '<tool_call>\n{"name": "close_issue", "arguments": {"number": 2}}\n</tool_call>';
    const third = '<tool_call>\n{"name": "list_issues"}\n</tool_call>';
    assert.deepEqual(hermesCodec.parse(`${first}\n${second}<|im_end|>`), {
      kind: 'tool_calls',
      calls: [
        { name: 'close_issue', arguments: { number: 1 } },
        { name: 'close_issue', arguments: { number: 2 } },
      ],
    });
    assert.deepEqual(hermesCodec.parse(`Closing both, then listing.\n${first}${second}\n\n${third}`), {
      kind: 'tool_calls',
      calls: [
        { name: 'close_issue', arguments: { number: 1 } },
        { name: 'close_issue', arguments: { number: 2 } },
        { name: 'list_issues', arguments: {} },
      ],
      text: 'Closing both, then listing.',
    });
  });

  it('keeps only the words before the first call: text between or after calls has no place in the turn', () => {
    assert.deepEqual(
      hermesCodec.parse('<tool_call>{"name": "close_issue", "arguments": {"number": 1}}</tool_call> and also <tool_call>{"name": "close_issue", "arguments": {"number": 2}}</tool_call> done'),
      { kind: 'tool_calls', calls: [{ name: 'close_issue', arguments: { number: 1 } }, { name: 'close_issue', arguments: { number: 2 } }] },
    );
    assert.deepEqual(hermesCodec.parse('<tool_call>{"name": "close_issue", "arguments": {"number": 1}}</tool_call> done'), { kind: 'tool_call', name: 'close_issue', arguments: { number: 1 } });
  });

  it('reports a turn of several calls as malformed when any block cannot be read, and says which', () => {
    const good = '<tool_call>{"name": "close_issue", "arguments": {"number": 1}}</tool_call>';
    malformed(`${good}\n<tool_call>{"name": "close_issue", "arguments": {"number": }}</tool_call>`, '<tool_call> 2 of 2 is not valid JSON: unexpected "}" at offset 48');
    malformed(`${good}\n${good}\n<tool_call>\n{"name": "close_issue", "arguments": {"num`, 'unterminated <tool_call> 3 of 3');
    malformed(`<tool_call>{"arguments": {"number": 1}}</tool_call>${good}`, '<tool_call> 1 of 2 has no "name" string');
    malformed(`${good}<tool_call>[1]</tool_call>${good}`, '<tool_call> 2 of 3 holds an array, not an object');
    malformed(`${good}${good}<tool_call>{"name": "close_issue", "arguments": "seven"}</tool_call>`, '<tool_call> 3 of 3 "arguments" is a string that does not hold a JSON object');
  });

  it('reports an unterminated call', () => {
    malformed('<tool_call>\n{"name": "search_issues", "arguments": {"query": "lo', 'unterminated <tool_call>');
  });

  it('reports JSON that does not parse, with where it broke', () => {
    malformed('<tool_call>{"name": "search_issues", }</tool_call>', '<tool_call> is not valid JSON: unexpected "}" at offset 26');
    malformed('<tool_call></tool_call>', '<tool_call> is not valid JSON: unexpected end of input');
  });

  it('reports a call without a name', () => {
    malformed('<tool_call>{"arguments": {"query": "login"}}</tool_call>', '<tool_call> has no "name" string');
    malformed('<tool_call>{"name": 7, "arguments": {}}</tool_call>', '<tool_call> has no "name" string');
  });

  it('reports a call that is not an object', () => {
    malformed('<tool_call>["search_issues"]</tool_call>', '<tool_call> holds an array, not an object');
  });

  it('reports arguments that are not an object', () => {
    malformed('<tool_call>{"name": "search_issues", "arguments": ["login"]}</tool_call>', '<tool_call> "arguments" is an array, not an object');
    malformed('<tool_call>{"name": "search_issues", "arguments": null}</tool_call>', '<tool_call> "arguments" is null, not an object');
    malformed('<tool_call>{"name": "search_issues", "arguments": "login"}</tool_call>', '<tool_call> "arguments" is a string that does not hold a JSON object');
  });
});
