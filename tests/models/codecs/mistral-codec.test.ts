import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Message } from '../../../src/core/conversation.js';
import { mistralCallId, mistralCodec } from '../../../src/models/codecs/mistral-codec.js';
import { closeTool, CONVERSATION, PARALLEL, SHORT, TOOLS } from './codec-fixtures.js';

// Written by hand from Mistral v0.3's chat template; one line, broken here only at turn boundaries for reading.
const PINNED = [
  String.raw`<s>[AVAILABLE_TOOLS] [{"type": "function", "function": {"name": "search_issues", "description": "Search issues by text.", "parameters": {"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["query"]}}}, `,
  String.raw`{"type": "function", "function": {"name": "close_issue", "description": "Close an issue (fails if it is \"locked\").", "parameters": {"type": "object", "properties": {"number": {"type": "integer"}}, "required": ["number"]}}}][/AVAILABLE_TOOLS]`,
  '[INST] You are a careful issue-tracker assistant.\n\nClose the login bug.[/INST]',
  '[TOOL_CALLS] [{"name": "search_issues", "arguments": {"query": "login", "limit": "twenty"}, "id": "call00001"}]</s>',
  '[TOOL_RESULTS] {"content": "limit: expected integer, got string", "call_id": "call00001"}[/TOOL_RESULTS]',
  '[TOOL_CALLS] [{"name": "search_issues", "arguments": {"query": "login", "limit": 20}, "id": "call00002"}]</s>',
  String.raw`[TOOL_RESULTS] {"content": "{\"issues\":[{\"number\":4821,\"title\":\"Login fails for \\\"ops\\\" — é\"}],\"total\":1}", "call_id": "call00002"}[/TOOL_RESULTS]`,
  '[TOOL_CALLS] [{"name": "close_issue", "arguments": {"number": 4821}, "id": "call00003"}]</s>',
  '[TOOL_RESULTS] {"content": "issue 4821 is locked", "call_id": "call00003"}[/TOOL_RESULTS]',
  ' <tool_call>{"name": "close_issue", "arguments": {"number": 4821, "force": tru}}</tool_call></s>',
  '[TOOL_RESULTS] {"content": "malformed tool call: <tool_call> is not valid JSON", "call_id": "call00000"}[/TOOL_RESULTS]',
  ' Issue 4821 is locked, so I could not close it.</s>',
].join('');

describe('mistral codec: render', () => {
  it('renders the pinned conversation byte for byte', () => {
    assert.equal(mistralCodec.render(CONVERSATION, TOOLS), PINNED);
  });

  it('renders without tools: the system message opens the last user turn', () => {
    assert.equal(mistralCodec.render(SHORT, []), '<s>[INST] Be brief.\n\nHi[/INST]');
    assert.equal(mistralCodec.render([{ role: 'user', content: 'Hi' }], []), '<s>[INST] Hi[/INST]');
  });

  it('puts the tools and the system message with the last user turn only', () => {
    const messages: Message[] = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Close 7.' },
      { role: 'assistant', content: 'Which tracker?' },
      { role: 'user', content: 'The main one.' },
    ];
    assert.equal(
      mistralCodec.render(messages, [closeTool]),
      '<s>[INST] Close 7.[/INST] Which tracker?</s>' +
        '[AVAILABLE_TOOLS] [{"type": "function", "function": {"name": "close_issue", "description": "Close an issue (fails if it is \\"locked\\").", ' +
        '"parameters": {"type": "object", "properties": {"number": {"type": "integer"}}, "required": ["number"]}}}][/AVAILABLE_TOOLS]' +
        '[INST] Be brief.\n\nThe main one.[/INST]',
    );
  });

  it("maps call ids to Mistral's nine alphanumeric characters", () => {
    assert.equal(mistralCallId('call_1'), 'call00001');
    assert.equal(mistralCallId('call_12345'), 'call12345');
    assert.equal(mistralCallId(null), 'call00000');
    const other = mistralCallId('toolu_01A');
    assert.match(other, /^[0-9a-z]{9}$/);
    assert.equal(mistralCallId('toolu_01A'), other);
    assert.notEqual(mistralCallId('toolu_01B'), other);
  });
});

describe('mistral codec: render of several calls in one turn', () => {
  it('lists the calls in one [TOOL_CALLS] and gives each result its own [TOOL_RESULTS], as the v0.3 template does', () => {
    assert.equal(
      mistralCodec.render(PARALLEL, []),
      '<s>[INST] You are a careful issue-tracker assistant.\n\nFind the login bug and close #7.[/INST]' +
        '[TOOL_CALLS] [{"name": "search_issues", "arguments": {"query": "login", "limit": 5}, "id": "call00001"}, {"name": "close_issue", "arguments": {"number": 7}, "id": "call00002"}]</s>' +
        String.raw`[TOOL_RESULTS] {"content": "{\"issues\":[{\"number\":4821,\"title\":\"Login fails for \\\"ops\\\" — é\"}],\"total\":1}", "call_id": "call00001"}[/TOOL_RESULTS]` +
        '[TOOL_RESULTS] {"content": "issue 7 is locked", "call_id": "call00002"}[/TOOL_RESULTS]' +
        ' Found #4821; #7 is locked.</s>',
    );
  });
});

describe('mistral codec: parse', () => {
  const malformed = (raw: string, reason: string) => assert.deepEqual(mistralCodec.parse(raw), { kind: 'malformed_tool_call', raw, reason });

  it('reads text without [TOOL_CALLS] as the final answer, trimmed and without </s>', () => {
    assert.deepEqual(mistralCodec.parse(' Issue 4821 is closed.</s>'), { kind: 'final_text', text: 'Issue 4821 is closed.' });
  });

  it('reads the list form', () => {
    assert.deepEqual(mistralCodec.parse('[TOOL_CALLS] [{"name": "search_issues", "arguments": {"query": "login", "limit": "twenty"}}]</s>'), {
      kind: 'tool_call',
      name: 'search_issues',
      arguments: { query: 'login', limit: 'twenty' },
    });
  });

  it('reads the single object form, and the form without a space', () => {
    assert.deepEqual(mistralCodec.parse('[TOOL_CALLS] {"name": "close_issue", "arguments": {"number": 7}}'), { kind: 'tool_call', name: 'close_issue', arguments: { number: 7 } });
    assert.deepEqual(mistralCodec.parse('[TOOL_CALLS][{"name": "close_issue", "arguments": {"number": 7}, "id": "abcdefghi"}]'), {
      kind: 'tool_call',
      name: 'close_issue',
      arguments: { number: 7 },
    });
  });

  it('keeps the words before [TOOL_CALLS] as the call text', () => {
    assert.deepEqual(mistralCodec.parse('Closing it.\n[TOOL_CALLS] [{"name": "close_issue", "arguments": {"number": 7}}]'), {
      kind: 'tool_call',
      name: 'close_issue',
      arguments: { number: 7 },
      text: 'Closing it.',
    });
  });

  it('reads missing or string-encoded arguments', () => {
    assert.deepEqual(mistralCodec.parse('[TOOL_CALLS] [{"name": "list_issues"}]'), { kind: 'tool_call', name: 'list_issues', arguments: {} });
    assert.deepEqual(mistralCodec.parse(String.raw`[TOOL_CALLS] [{"name": "close_issue", "arguments": "{\"number\": 7}"}]`), {
      kind: 'tool_call',
      name: 'close_issue',
      arguments: { number: 7 },
    });
  });

  it('reads a list of several calls as one turn of several calls, in order', () => {
    assert.deepEqual(mistralCodec.parse('[TOOL_CALLS] [{"name": "close_issue", "arguments": {"number": 1}}, {"name": "close_issue", "arguments": {"number": 2}}]</s>'), {
      kind: 'tool_calls',
      calls: [
        { name: 'close_issue', arguments: { number: 1 } },
        { name: 'close_issue', arguments: { number: 2 } },
      ],
    });
    assert.deepEqual(
      mistralCodec.parse('Three.[TOOL_CALLS][{"name": "close_issue", "arguments": {"number": 1}, "id": "abcdefghi"}, {"name": "list_issues"}, {"name": "get_issue", "arguments": "{\\"number\\": 3}"}]'),
      {
        kind: 'tool_calls',
        calls: [
          { name: 'close_issue', arguments: { number: 1 } },
          { name: 'list_issues', arguments: {} },
          { name: 'get_issue', arguments: { number: 3 } },
        ],
        text: 'Three.',
      },
    );
  });

  it('reports a list of several calls as malformed when any call cannot be read, and says which', () => {
    const good = '{"name": "close_issue", "arguments": {"number": 1}}';
    malformed(`[TOOL_CALLS] [${good}, {"arguments": {"number": 2}}]`, '[TOOL_CALLS] call 2 of 2 has no "name" string');
    malformed(`[TOOL_CALLS] ["close_issue", ${good}, ${good}]`, '[TOOL_CALLS] call 1 of 3 is a string, not an object');
    malformed(`[TOOL_CALLS] [${good}, ${good}, {"name": "close_issue", "arguments": 7}]`, `[TOOL_CALLS] call 3 of 3's "arguments" is a number, not an object`);
  });

  it('reports calls that cannot be read', () => {
    malformed('[TOOL_CALLS] [{"name": "search_issues", "arguments": {"query": }}]', '[TOOL_CALLS] is not followed by valid JSON: unexpected "}" at offset 51');
    malformed('[TOOL_CALLS] [{"name": "search_issues", "arguments": {"query": "lo', '[TOOL_CALLS] is not followed by valid JSON: unexpected end of input inside a string');
    malformed('[TOOL_CALLS]</s>', '[TOOL_CALLS] is not followed by valid JSON: unexpected end of input');
    malformed('[TOOL_CALLS] []', '[TOOL_CALLS] holds an empty list');
    malformed('[TOOL_CALLS] ["close_issue"]', '[TOOL_CALLS] call is a string, not an object');
    malformed('[TOOL_CALLS] [{"arguments": {"number": 7}}]', '[TOOL_CALLS] call has no "name" string');
    malformed('[TOOL_CALLS] [{"name": "close_issue", "arguments": 7}]', `[TOOL_CALLS] call's "arguments" is a number, not an object`);
  });
});
