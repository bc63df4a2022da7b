import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Message } from '../../../src/core/conversation.js';
import { llama3Codec } from '../../../src/models/codecs/llama3-codec.js';
import { closeTool, CONVERSATION, PARALLEL, SEARCH_RESULT, SHORT, TOOLS } from './codec-fixtures.js';

// Written by hand from Llama 3.1's JSON tool-calling prompt format; a changed byte here is a changed prompt.
const PINNED = String.raw`<|begin_of_text|><|start_header_id|>system<|end_header_id|>

Environment: ipython
Cutting Knowledge Date: December 2023
Today Date: 26 Jul 2024

You are a careful issue-tracker assistant.<|eot_id|><|start_header_id|>user<|end_header_id|>

Given the following functions, please respond with a JSON for a function call with its proper arguments that best answers the given prompt.

Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.Do not use variables.

{
    "type": "function",
    "function": {
        "name": "search_issues",
        "description": "Search issues by text.",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {
                    "type": "string"
                },
                "limit": {
                    "type": "integer"
                }
            },
            "required": [
                "query"
            ]
        }
    }
}

{
    "type": "function",
    "function": {
        "name": "close_issue",
        "description": "Close an issue (fails if it is \"locked\").",
        "parameters": {
            "type": "object",
            "properties": {
                "number": {
                    "type": "integer"
                }
            },
            "required": [
                "number"
            ]
        }
    }
}

Close the login bug.<|eot_id|><|start_header_id|>assistant<|end_header_id|>

<|python_tag|>{"name": "search_issues", "parameters": {"query": "login", "limit": "twenty"}}<|eom_id|><|start_header_id|>ipython<|end_header_id|>

limit: expected integer, got string<|eot_id|><|start_header_id|>assistant<|end_header_id|>

<|python_tag|>{"name": "search_issues", "parameters": {"query": "login", "limit": 20}}<|eom_id|><|start_header_id|>ipython<|end_header_id|>

{"issues":[{"number":4821,"title":"Login fails for \"ops\" — é"}],"total":1}<|eot_id|><|start_header_id|>assistant<|end_header_id|>

<|python_tag|>{"name": "close_issue", "parameters": {"number": 4821}}<|eom_id|><|start_header_id|>ipython<|end_header_id|>

issue 4821 is locked<|eot_id|><|start_header_id|>assistant<|end_header_id|>

<tool_call>{"name": "close_issue", "arguments": {"number": 4821, "force": tru}}</tool_call><|eot_id|><|start_header_id|>ipython<|end_header_id|>

malformed tool call: <tool_call> is not valid JSON<|eot_id|><|start_header_id|>assistant<|end_header_id|>

Issue 4821 is locked, so I could not close it.<|eot_id|><|start_header_id|>assistant<|end_header_id|>

`;

describe('llama3 codec: render', () => {
  it('renders the pinned conversation byte for byte', () => {
    assert.equal(llama3Codec.render(CONVERSATION, TOOLS), PINNED);
  });

  it('renders without tools: no ipython environment, no preamble in the user message', () => {
    assert.equal(
      llama3Codec.render(SHORT, []),
      '<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\nBe brief.<|eot_id|>' +
        '<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n',
    );
  });

  it('puts the tools in the first user message only, and leaves the system text empty when there is none', () => {
    const messages: Message[] = [
      { role: 'user', content: 'Close 7.' },
      { role: 'assistant', content: 'Which tracker?' },
      { role: 'user', content: 'The main one.' },
    ];
    assert.equal(
      llama3Codec.render(messages, [closeTool]),
      '<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nEnvironment: ipython\nCutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n<|eot_id|>' +
        '<|start_header_id|>user<|end_header_id|>\n\nGiven the following functions, please respond with a JSON for a function call with its proper arguments that best answers the given prompt.\n\n' +
        'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.Do not use variables.\n\n' +
        '{\n    "type": "function",\n    "function": {\n        "name": "close_issue",\n        "description": "Close an issue (fails if it is \\"locked\\").",\n' +
        '        "parameters": {\n            "type": "object",\n            "properties": {\n                "number": {\n                    "type": "integer"\n                }\n            },\n' +
        '            "required": [\n                "number"\n            ]\n        }\n    }\n}\n\n' +
        'Close 7.<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nWhich tracker?<|eot_id|>' +
        '<|start_header_id|>user<|end_header_id|>\n\nThe main one.<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n',
    );
  });
});

describe('llama3 codec: render of several calls in one turn', () => {
  it('joins the calls with "; " after one <|python_tag|>, and gives each result its own ipython turn', () => {
    // Meta's templates refuse several calls in a turn; this is the convention vLLM's llama3_json parser reads.
    assert.equal(
      llama3Codec.render(PARALLEL, []),
      '<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n' +
        'You are a careful issue-tracker assistant.<|eot_id|>' +
        '<|start_header_id|>user<|end_header_id|>\n\nFind the login bug and close #7.<|eot_id|>' +
        '<|start_header_id|>assistant<|end_header_id|>\n\n<|python_tag|>{"name": "search_issues", "parameters": {"query": "login", "limit": 5}}; ' +
        '{"name": "close_issue", "parameters": {"number": 7}}<|eom_id|>' +
        '<|start_header_id|>ipython<|end_header_id|>\n\n' +
        SEARCH_RESULT +
        '<|eot_id|>' +
        '<|start_header_id|>ipython<|end_header_id|>\n\nissue 7 is locked<|eot_id|>' +
        '<|start_header_id|>assistant<|end_header_id|>\n\nFound #4821; #7 is locked.<|eot_id|>' +
        '<|start_header_id|>assistant<|end_header_id|>\n\n',
    );
  });
});

describe('llama3 codec: parse', () => {
  const malformed = (raw: string, reason: string) => assert.deepEqual(llama3Codec.parse(raw), { kind: 'malformed_tool_call', raw, reason });

  it('reads plain text as the final answer, trimmed and without the end token', () => {
    assert.deepEqual(llama3Codec.parse('Issue 4821 is closed.<|eot_id|>'), { kind: 'final_text', text: 'Issue 4821 is closed.' });
    assert.deepEqual(llama3Codec.parse('\n I could not find it. \n'), { kind: 'final_text', text: 'I could not find it.' });
  });

  it('reads a call after <|python_tag|>', () => {
    assert.deepEqual(llama3Codec.parse('<|python_tag|>{"name": "search_issues", "parameters": {"query": "login", "limit": 20}}<|eom_id|>'), {
      kind: 'tool_call',
      name: 'search_issues',
      arguments: { query: 'login', limit: 20 },
    });
  });

  it('accepts "arguments" in place of "parameters", and no arguments at all', () => {
    assert.deepEqual(llama3Codec.parse('<|python_tag|>{"name": "close_issue", "arguments": {"number": 7}}'), { kind: 'tool_call', name: 'close_issue', arguments: { number: 7 } });
    assert.deepEqual(llama3Codec.parse('<|python_tag|>{"name": "list_issues"}'), { kind: 'tool_call', name: 'list_issues', arguments: {} });
  });

  it('keeps words written before <|python_tag|> as the call text', () => {
    assert.deepEqual(llama3Codec.parse('Let me look.<|python_tag|>{"name": "close_issue", "parameters": {"number": 7}}'), {
      kind: 'tool_call',
      name: 'close_issue',
      arguments: { number: 7 },
      text: 'Let me look.',
    });
  });

  it('reads a bare JSON call without the tag, as Llama 3.1 writes custom-tool calls', () => {
    assert.deepEqual(llama3Codec.parse('{"name": "search_issues", "parameters": {"query": "login", "limit": "twenty"}}<|eot_id|>'), {
      kind: 'tool_call',
      name: 'search_issues',
      arguments: { query: 'login', limit: 'twenty' },
    });
    assert.deepEqual(llama3Codec.parse('{"type": "function", "name": "close_issue", "parameters": {"number": 7}}'), { kind: 'tool_call', name: 'close_issue', arguments: { number: 7 } });
  });

  it('reads calls joined by ";" as one turn of several calls, in order', () => {
    assert.deepEqual(llama3Codec.parse('<|python_tag|>{"name": "close_issue", "parameters": {"number": 1}}; {"name": "close_issue", "parameters": {"number": 2}}<|eom_id|>'), {
      kind: 'tool_calls',
      calls: [
        { name: 'close_issue', arguments: { number: 1 } },
        { name: 'close_issue', arguments: { number: 2 } },
      ],
    });
    assert.deepEqual(llama3Codec.parse('Both.<|python_tag|>{"name": "close_issue", "parameters": {"number": 1}} ;\n{"name": "list_issues"};{"name": "get_issue", "arguments": {"number": 3}};'), {
      kind: 'tool_calls',
      calls: [
        { name: 'close_issue', arguments: { number: 1 } },
        { name: 'list_issues', arguments: {} },
        { name: 'get_issue', arguments: { number: 3 } },
      ],
      text: 'Both.',
    });
  });

  it('reads bare calls joined by ";" too, and one call with a trailing ";" as one call', () => {
    assert.deepEqual(llama3Codec.parse('{"name": "close_issue", "parameters": {"number": 1}}; {"name": "close_issue", "parameters": {"number": 2}}<|eot_id|>'), {
      kind: 'tool_calls',
      calls: [
        { name: 'close_issue', arguments: { number: 1 } },
        { name: 'close_issue', arguments: { number: 2 } },
      ],
    });
    assert.deepEqual(llama3Codec.parse('<|python_tag|>{"name": "close_issue", "parameters": {"number": 1}};'), { kind: 'tool_call', name: 'close_issue', arguments: { number: 1 } });
  });

  it('reports a turn of several calls as malformed when any call cannot be read, and says which', () => {
    const good = '{"name": "close_issue", "parameters": {"number": 1}}';
    malformed(`<|python_tag|>${good}; {"name": "close_issue", "parameters": {"number": }}`, 'after <|python_tag|>, call 2 is not valid JSON: unexpected "}" at offset 49');
    malformed(`<|python_tag|>${good}; ${good} then more`, 'after <|python_tag|>, call 2 is followed by text that is not another call');
    malformed(`<|python_tag|>${good}; {"parameters": {}}; ${good}`, 'after <|python_tag|>, call 2 has no "name" string');
    malformed(`<|python_tag|>[1]; ${good}`, 'after <|python_tag|>, call 1 is an array, not an object');
    malformed(`${good}; ${good}; {"name": "close_issue", "parameters": [7]}`, `call 3's "parameters" is an array, not an object`);
  });

  it('reads JSON that is not a call as the final answer', () => {
    assert.deepEqual(llama3Codec.parse('{"total": 2}'), { kind: 'final_text', text: '{"total": 2}' });
    assert.deepEqual(llama3Codec.parse('{not json at all}'), { kind: 'final_text', text: '{not json at all}' });
    // A "name" that is not the first key and no parameters: an answer in JSON, not a call.
    assert.deepEqual(llama3Codec.parse('{"title": "Login fails", "name": "Ada"}'), { kind: 'final_text', text: '{"title": "Login fails", "name": "Ada"}' });
  });

  it('reports a bare call that starts like one but is broken', () => {
    malformed('{"name": "search_issues", "parameters": {"query": "login"', 'the call is not valid JSON: unexpected end of input');
    malformed('{"name": "search_issues", "parameters": "login"}', `the call's "parameters" is a string that does not hold a JSON object`);
  });

  it('reports a tagged call that is broken', () => {
    malformed('<|python_tag|>{"name": "search_issues", "parameters": {"query": }}<|eom_id|>', 'after <|python_tag|>, the call is not valid JSON: unexpected "}" at offset 50');
    malformed('<|python_tag|>{"parameters": {"query": "login"}}', 'after <|python_tag|>, the call has no "name" string');
    malformed('<|python_tag|>{"name": "search_issues", "parameters": [1]}', `after <|python_tag|>, the call's "parameters" is an array, not an object`);
    malformed('<|python_tag|>["search_issues"]', 'after <|python_tag|>, the call is an array, not an object');
    malformed('<|python_tag|>{"name": "close_issue", "parameters": {"number": 7}} and then more', 'after <|python_tag|>, the call is followed by text that is not another call');
  });
});
