// Holds one OpenAI-compatible chat completion to the wire, over real HTTP
// against the fake OpenAI server and, for dialects it does not speak, small
// servers written here: the body sent (sampling, seed, tools, stream
// options, the key only in its header), streamed answers reassembled
// (arguments split mid-string, calls interleaved by index, a missing index,
// the usage chunk) to the same answer as the whole one, retries after 429 and
// 5xx only (Retry-After honoured, attempts counted, the backoff cut short by
// the episode), and every failure of the server as one InfrastructureError
// line that never carries the key.

import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import {
  chatCompletion,
  DEFAULT_RETRIES,
  ModelServerRefused,
  openAIOrigin,
  retryAfterMs,
  type ChatCallOptions,
  type ChatCompletionRequest,
  type OpenAIServer,
  type OpenAITool,
} from '../../src/models/openai/chat-completion.js';
import { InfrastructureError } from '../../src/policy/policy-contract.js';
import { ISSUES_TOOLS } from '../../src/world/issues/issues-tools.js';
import type { JsonObject } from '../../src/core/json-value.js';
import { startFakeOpenAI, type FakeOpenAI } from '../fixtures/fake-openai.js';

const TOOLS: OpenAITool[] = ISSUES_TOOLS.map((tool) => ({ type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.inputSchema as JsonObject } }));
const LABEL_CALLS = [
  { name: 'remove_label', arguments: { number: 3907, label: 'bug' } },
  { name: 'add_label', arguments: { number: 3907, label: 'enhancement' } },
];
const KEY = 'sk-test-7f3k2qa9x1';

function request(model: string, fields: Partial<ChatCompletionRequest> = {}): ChatCompletionRequest {
  return {
    model,
    messages: [
      { role: 'system', content: 'You manage an issue tracker.' },
      { role: 'user', content: 'Relabel issue #3907 from bug to enhancement.' },
    ],
    tools: TOOLS,
    temperature: 0.7,
    top_p: 0.9,
    seed: 1234,
    max_tokens: 256,
    stream: true,
    ...fields,
  };
}

const call = (options: Partial<ChatCallOptions> = {}): ChatCallOptions => ({ timeoutMs: 2_000, signal: new AbortController().signal, backoffMs: 5, ...options });

/** The failure a promise rejects with, for assertions on its exact message. */
async function failureOf(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof Error, `rejected with ${String(error)}`);
    return error;
  }
  assert.fail('expected a failure');
}

/** A server for one dialect the fake does not speak. */
async function rawServer(handler: (request: IncomingMessage, response: ServerResponse) => void): Promise<{ server: OpenAIServer; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => handler(request, response));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server: { baseUrl: `http://127.0.0.1:${port}/v1` },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function sse(response: ServerResponse, chunks: unknown[], done = true) {
  response.writeHead(200, { 'Content-Type': 'text/event-stream' });
  for (const chunk of chunks) response.write(`data: ${JSON.stringify(chunk)}\n\n`);
  response.end(done ? 'data: [DONE]\n\n' : '');
}

const delta = (value: Record<string, unknown>, finish: string | null = null) => ({ id: 'x', object: 'chat.completion.chunk', choices: [{ index: 0, delta: value, finish_reason: finish }] });

let fake: FakeOpenAI;
before(async () => {
  fake = await startFakeOpenAI();
  fake.addModel({ name: 'two-labels', family: 'qwen2', behaviour: () => ({ kind: 'calls', calls: LABEL_CALLS }), nativeCalls: true });
  fake.addModel({ name: 'one-close', family: 'qwen2', behaviour: () => ({ kind: 'call', call: { name: 'close_issue', arguments: { number: 4821, reason: 'completed' } } }), nativeCalls: true });
  fake.addModel({ name: 'talker', family: 'qwen2', behaviour: () => ({ kind: 'text', text: 'Done: #3907 is now labelled enhancement.' }) });
  fake.addModel({ name: 'text-caller', family: 'qwen2', behaviour: () => ({ kind: 'calls', calls: LABEL_CALLS }), nativeCalls: false });
});
after(() => fake.close());
beforeEach(() => fake.clearFailures());

describe('chatCompletion: the request', () => {
  it('sends exactly the request fields, tool_choice auto with tools, and stream_options when streaming', async () => {
    await chatCompletion({ baseUrl: fake.baseUrl }, request('talker', { stop: ['</s>'] }), call());
    const sent = fake.chatBodies().at(-1)!;
    assert.deepEqual(Object.keys(sent).sort(), ['max_tokens', 'messages', 'model', 'seed', 'stop', 'stream', 'stream_options', 'temperature', 'tool_choice', 'tools', 'top_p']);
    assert.equal(sent.model, 'talker');
    assert.equal(sent.seed, 1234);
    assert.equal(sent.temperature, 0.7);
    assert.equal(sent.top_p, 0.9);
    assert.equal(sent.max_tokens, 256);
    assert.deepEqual(sent.stop, ['</s>']);
    assert.equal(sent.tool_choice, 'auto');
    assert.deepEqual(sent.stream_options, { include_usage: true });
    assert.deepEqual(sent.tools, TOOLS);
    assert.equal(fake.requestsTo('/v1/chat/completions').at(-1)!.headers.authorization, undefined);
  });

  it('leaves out tools, tool_choice, top_p, stop and stream_options when there are none', async () => {
    await chatCompletion({ baseUrl: fake.baseUrl }, request('talker', { tools: [], top_p: undefined, stream: false }), call());
    const sent = fake.chatBodies().at(-1)!;
    assert.deepEqual(Object.keys(sent).sort(), ['max_tokens', 'messages', 'model', 'seed', 'stream', 'temperature']);
    assert.equal(sent.stream, false);
  });

  it('puts the key in the Authorization header and nowhere in the body', async () => {
    const guarded = await startFakeOpenAI({ apiKey: KEY });
    try {
      const answer = await chatCompletion({ baseUrl: guarded.baseUrl, apiKey: KEY }, request('fake-liar:1b'), call());
      assert.equal(answer.finishReason, 'stop');
      const [sent] = guarded.requestsTo('/v1/chat/completions');
      assert.equal(sent!.headers.authorization, `Bearer ${KEY}`);
      assert.ok(!JSON.stringify(sent!.body).includes(KEY));
    } finally {
      await guarded.close();
    }
  });
});

describe('chatCompletion: the answer', () => {
  it('reassembles two calls whose arguments are split mid-string and interleaved by index, and reads the usage chunk', async () => {
    const answer = await chatCompletion({ baseUrl: fake.baseUrl }, request('two-labels'), call());
    assert.deepEqual(
      answer.toolCalls.map(({ name, arguments: args }) => ({ name, arguments: JSON.parse(args) })),
      LABEL_CALLS,
    );
    assert.ok(answer.toolCalls.every((toolCall) => typeof toolCall.id === 'string' && toolCall.id.startsWith('call_')));
    assert.notEqual(answer.toolCalls[0]!.id, answer.toolCalls[1]!.id);
    assert.equal(answer.finishReason, 'tool_calls');
    assert.equal(answer.text, '');
    assert.equal(answer.attempts, 1);
    assert.ok(answer.usage && answer.usage.completion_tokens > 0 && answer.usage.total_tokens === answer.usage.prompt_tokens + answer.usage.completion_tokens);
  });

  it('gives the same answer streamed (sequential, interleaved, whole) as not streamed', async () => {
    const whole = await chatCompletion({ baseUrl: fake.baseUrl }, request('two-labels', { stream: false }), call());
    assert.equal(whole.toolCalls.length, 2);
    for (const toolCallStreaming of ['sequential', 'interleaved', 'whole'] as const) {
      const server = await startFakeOpenAI({ toolCallStreaming, argumentChunkChars: 3 });
      server.addModel({ name: 'two-labels', family: 'qwen2', behaviour: () => ({ kind: 'calls', calls: LABEL_CALLS }), nativeCalls: true });
      try {
        const streamed = await chatCompletion({ baseUrl: server.baseUrl }, request('two-labels'), call());
        assert.deepEqual(streamed, whole, toolCallStreaming);
      } finally {
        await server.close();
      }
    }
  });

  it('takes a fragment without an index as index 0 (one call), and a new id without an index as the next call', async () => {
    const server = await startFakeOpenAI({ toolCallStreaming: 'sequential', omitToolCallIndex: true });
    server.addModel({ name: 'one-close', family: 'qwen2', behaviour: () => ({ kind: 'call', call: { name: 'close_issue', arguments: { number: 4821, reason: 'completed' } } }), nativeCalls: true });
    server.addModel({ name: 'two-labels', family: 'qwen2', behaviour: () => ({ kind: 'calls', calls: LABEL_CALLS }), nativeCalls: true });
    try {
      const one = await chatCompletion({ baseUrl: server.baseUrl }, request('one-close'), call());
      assert.equal(one.toolCalls.length, 1);
      assert.deepEqual(JSON.parse(one.toolCalls[0]!.arguments), { number: 4821, reason: 'completed' });
      const two = await chatCompletion({ baseUrl: server.baseUrl }, request('two-labels'), call());
      assert.deepEqual(
        two.toolCalls.map((toolCall) => [toolCall.name, JSON.parse(toolCall.arguments)]),
        LABEL_CALLS.map((labelCall) => [labelCall.name, labelCall.arguments]),
      );
    } finally {
      await server.close();
    }
  });

  it('orders calls by index whatever order they arrive in, keeps invalid JSON arguments as sent, and an id null when none came', async () => {
    const raw = await rawServer((_, response) =>
      sse(response, [
        delta({ role: 'assistant', content: '' }),
        delta({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'add_label', arguments: '{"number": 39' } }] }),
        delta({ tool_calls: [{ index: 0, type: 'function', function: { name: 'remove_label', arguments: '{"number": ' } }] }),
        delta({ tool_calls: [{ index: 1, function: { arguments: '07, "label": "enh' } }] }),
        delta({ tool_calls: [{ index: 0, function: { arguments: '3907, "label": ' } }] }, 'tool_calls'),
        { id: 'x', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 } },
      ]),
    );
    try {
      const answer = await chatCompletion(raw.server, request('m'), call());
      assert.deepEqual(answer.toolCalls, [
        { id: null, name: 'remove_label', arguments: '{"number": 3907, "label": ' },
        { id: 'call_b', name: 'add_label', arguments: '{"number": 3907, "label": "enh' },
      ]);
      assert.equal(answer.finishReason, 'tool_calls');
      assert.deepEqual(answer.usage, { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 });
    } finally {
      await raw.close();
    }
  });

  it('reads a whole answer: content, calls, finish_reason, usage; arguments sent as an object become JSON text', async () => {
    const text = await chatCompletion({ baseUrl: fake.baseUrl }, request('talker', { stream: false }), call());
    assert.equal(text.text, 'Done: #3907 is now labelled enhancement.');
    assert.deepEqual(text.toolCalls, []);
    assert.equal(text.finishReason, 'stop');
    assert.ok(text.usage && text.usage.prompt_tokens > 0);
    const raw = await rawServer((_, response) => {
      response.writeHead(200, { 'Content-Type': 'application/json' });
      response.end(
        JSON.stringify({
          id: 'c',
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_issue', arguments: { number: 7 } } }] }, finish_reason: 'tool_calls' }],
        }),
      );
    });
    try {
      const answer = await chatCompletion(raw.server, request('m', { stream: false }), call());
      assert.deepEqual(answer.toolCalls, [{ id: 'call_1', name: 'get_issue', arguments: '{"number":7}' }]);
      assert.equal(answer.text, '');
      assert.equal(answer.usage, null);
    } finally {
      await raw.close();
    }
  });

  it('streams text token by token to the same text, and says `length` when max_tokens cut it', async () => {
    const answer = await chatCompletion({ baseUrl: fake.baseUrl }, request('talker'), call());
    assert.equal(answer.text, 'Done: #3907 is now labelled enhancement.');
    assert.equal(answer.finishReason, 'stop');
    const cut = await chatCompletion({ baseUrl: fake.baseUrl }, request('talker', { max_tokens: 2 }), call());
    assert.equal(cut.text, 'Done: #3907');
    assert.equal(cut.finishReason, 'length');
  });

  it('hands calls a model wrote as text (no server-side parser) back as content, for the codec', async () => {
    const answer = await chatCompletion({ baseUrl: fake.baseUrl }, request('text-caller'), call());
    assert.deepEqual(answer.toolCalls, []);
    assert.match(answer.text, /^<tool_call>\n\{"name": "remove_label", "arguments": \{"number": 3907, "label": "bug"\}\}\n<\/tool_call>\n<tool_call>/);
  });

  it('keeps reasoning a server split off apart from the text, streamed or whole', async () => {
    const raw = await rawServer((request, response) => {
      if (request.headers.accept === 'application/json') {
        response.writeHead(200, { 'Content-Type': 'application/json' });
        response.end(JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: 'It is #7.', reasoning_content: 'The user wants the number.' }, finish_reason: 'stop' }] }));
        return;
      }
      sse(response, [delta({ role: 'assistant', content: null }), delta({ reasoning_content: 'The user ' }), delta({ reasoning_content: 'wants the number.' }), delta({ content: 'It is #7.' }, 'stop')]);
    });
    try {
      for (const stream of [true, false]) {
        const answer = await chatCompletion({ baseUrl: `${raw.server.baseUrl}/` }, request('m', { stream }), call());
        assert.equal(answer.text, 'It is #7.');
        assert.equal(answer.reasoning, 'The user wants the number.');
      }
      const plain = await chatCompletion({ baseUrl: fake.baseUrl }, request('talker'), call());
      assert.equal('reasoning' in plain, false);
    } finally {
      await raw.close();
    }
  });

  it('reads a whole answer from a server that ignores stream: true', async () => {
    const raw = await rawServer((_, response) => {
      response.writeHead(200, { 'Content-Type': 'application/json' });
      response.end(JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }] }));
    });
    try {
      const answer = await chatCompletion(raw.server, request('m'), call());
      assert.equal(answer.text, 'hi');
    } finally {
      await raw.close();
    }
  });

  it('accepts a stream that gave its finish_reason but no [DONE]', async () => {
    fake.fail('chat', { kind: 'no-done', afterChunks: Infinity }, { times: 1 });
    const answer = await chatCompletion({ baseUrl: fake.baseUrl }, request('talker'), call());
    assert.equal(answer.text, 'Done: #3907 is now labelled enhancement.');
    assert.equal(answer.finishReason, 'stop');
  });
});

describe('chatCompletion: retries', () => {
  it('retries after a 429, waiting what Retry-After says rather than its own backoff', async () => {
    fake.fail('chat', { kind: 'http', status: 429, retryAfter: 1 }, { times: 1 });
    const started = performance.now();
    const answer = await chatCompletion({ baseUrl: fake.baseUrl }, request('two-labels'), call({ backoffMs: 1 }));
    const waited = performance.now() - started;
    assert.equal(answer.attempts, 2);
    assert.equal(answer.toolCalls.length, 2);
    assert.ok(waited >= 950, `waited ${waited} ms, not Retry-After's second`);
  });

  it('retries after 503s with a backoff and counts the attempts', async () => {
    const before = fake.requestsTo('/v1/chat/completions').length;
    fake.fail('chat', { kind: 'http', status: 503, message: 'the engine is loading' }, { times: 2 });
    const answer = await chatCompletion({ baseUrl: fake.baseUrl }, request('talker'), call());
    assert.equal(answer.attempts, 3);
    assert.equal(answer.text, 'Done: #3907 is now labelled enhancement.');
    assert.equal(fake.requestsTo('/v1/chat/completions').length - before, 3);
    // Every retry sends the same body: the same seed, the same messages.
    const bodies = fake.chatBodies().slice(-3).map((body) => JSON.stringify(body));
    assert.equal(new Set(bodies).size, 1);
  });

  it('says how many attempts were made when the retries run out, with the server\'s own words', async () => {
    const before = fake.requestsTo('/v1/chat/completions').length;
    fake.fail('chat', { kind: 'http', status: 503, message: 'the engine is loading' });
    const error = await failureOf(chatCompletion({ baseUrl: fake.baseUrl }, request('talker'), call({ retries: 2 })));
    assert.ok(error instanceof InfrastructureError);
    assert.ok(!(error instanceof ModelServerRefused));
    assert.equal(error.message, 'openai POST /chat/completions: HTTP 503 after 3 attempts: the engine is loading');
    assert.equal(fake.requestsTo('/v1/chat/completions').length - before, 3);
    assert.equal(DEFAULT_RETRIES, 3);
  });

  it('never retries a 400, 401 or 404: a ModelServerRefused with the status and the fix', async () => {
    for (const [status, hint] of [
      [400, /sampling options/],
      [401, /--api-key-env/],
      [404, /--base-url/],
    ] as const) {
      const before = fake.requestsTo('/v1/chat/completions').length;
      fake.clearFailures();
      fake.fail('chat', { kind: 'http', status, message: `refused with ${status}` });
      const error = await failureOf(chatCompletion({ baseUrl: fake.baseUrl }, request('talker'), call()));
      assert.ok(error instanceof ModelServerRefused, String(error));
      assert.equal(error.status, status);
      assert.ok(error.message.startsWith(`openai POST /chat/completions: HTTP ${status}: refused with ${status} (`), error.message);
      assert.match(error.message, hint);
      assert.equal(fake.requestsTo('/v1/chat/completions').length - before, 1);
    }
  });

  it('names a model the server does not serve with the server\'s 404 message', async () => {
    const error = await failureOf(chatCompletion({ baseUrl: fake.baseUrl }, request('no-such-model'), call()));
    assert.ok(error instanceof ModelServerRefused);
    assert.match(error.message, /^openai POST \/chat\/completions: HTTP 404: The model `no-such-model` does not exist\./);
  });

  it('does not retry a silence, a protocol error or a dropped connection', async () => {
    for (const failure of [{ kind: 'hang' }, { kind: 'garbage' }, { kind: 'disconnect' }, { kind: 'no-done' }] as const) {
      const before = fake.requestsTo('/v1/chat/completions').length;
      fake.clearFailures();
      fake.fail('chat', failure, { times: 1 });
      await assert.rejects(chatCompletion({ baseUrl: fake.baseUrl }, request('talker'), call({ timeoutMs: 200 })), InfrastructureError);
      assert.equal(fake.requestsTo('/v1/chat/completions').length - before, 1, failure.kind);
    }
  });

  it('reads Retry-After as seconds or as an HTTP date against the response\'s own Date, capped at 30 s', () => {
    assert.equal(retryAfterMs(new Headers({ 'retry-after': '2' })), 2000);
    assert.equal(retryAfterMs(new Headers({ 'retry-after': '120' })), 30_000);
    assert.equal(retryAfterMs(new Headers({ 'retry-after': 'Wed, 21 Oct 2026 07:28:05 GMT', date: 'Wed, 21 Oct 2026 07:28:00 GMT' })), 5000);
    assert.equal(retryAfterMs(new Headers({ 'retry-after': 'Wed, 21 Oct 2026 07:28:05 GMT' })), null);
    assert.equal(retryAfterMs(new Headers({ 'retry-after': 'soon' })), null);
    assert.equal(retryAfterMs(new Headers()), null);
  });
});

describe('chatCompletion: failures of the server', () => {
  it('reports a stall mid-stream as a silence naming --model-timeout', async () => {
    fake.fail('chat', { kind: 'stall', afterChunks: 2 }, { times: 1 });
    const error = await failureOf(chatCompletion({ baseUrl: fake.baseUrl }, request('talker'), call({ timeoutMs: 300 })));
    assert.ok(error instanceof InfrastructureError);
    assert.equal(error.message, 'openai POST /chat/completions: the model server stopped sending mid-answer for 0.3 s (--model-timeout)');
  });

  it('reports a server that never answers, and one that stalls a whole answer, as silences', async () => {
    fake.fail('chat', { kind: 'hang' }, { times: 1 });
    const hung = await failureOf(chatCompletion({ baseUrl: fake.baseUrl }, request('talker'), call({ timeoutMs: 300 })));
    assert.equal(hung.message, 'openai POST /chat/completions: the model server did not answer within 0.3 s (--model-timeout)');
    const stalled = await failureOf(chatCompletion({ baseUrl: fake.baseUrl }, request('fake-staller:1b', { stream: false }), call({ timeoutMs: 300 })));
    assert.equal(stalled.message, 'openai POST /chat/completions: the model server did not answer within 0.3 s (--model-timeout)');
  });

  it('reports a connection dropped mid-stream', async () => {
    fake.fail('chat', { kind: 'disconnect', afterChunks: 2 }, { times: 1 });
    const error = await failureOf(chatCompletion({ baseUrl: fake.baseUrl }, request('talker'), call()));
    assert.ok(error instanceof InfrastructureError);
    assert.match(error.message, /^openai POST \/chat\/completions: the connection to the model server dropped mid-answer/);
  });

  it('reports a stream that ended without [DONE] and without a finish_reason as cut off', async () => {
    fake.fail('chat', { kind: 'no-done' }, { times: 1 });
    const error = await failureOf(chatCompletion({ baseUrl: fake.baseUrl }, request('talker'), call()));
    assert.match(error.message, /^openai POST \/chat\/completions: the stream was cut off after \d+ events, before its finish_reason and \[DONE\]$/);
    fake.fail('chat', { kind: 'truncated', afterChunks: 1 }, { times: 1 });
    const truncated = await failureOf(chatCompletion({ baseUrl: fake.baseUrl }, request('talker'), call()));
    assert.match(truncated.message, /^openai POST \/chat\/completions: the stream was cut off after 2 events, in the middle of an event \("\{\\"id\\":\\"chatcmpl-/);
  });

  it('reports a body that is not the protocol: an HTML page, whole JSON without choices, an error event', async () => {
    fake.fail('chat', { kind: 'garbage' }, { times: 2 });
    const streamed = await failureOf(chatCompletion({ baseUrl: fake.baseUrl }, request('talker'), call()));
    assert.equal(streamed.message, 'openai POST /chat/completions: the answer is not an event stream ("<!DOCTYPE html>")');
    const whole = await failureOf(chatCompletion({ baseUrl: fake.baseUrl }, request('talker', { stream: false }), call()));
    assert.match(whole.message, /^openai POST \/chat\/completions: the answer is not JSON \("<!DOCTYPE html>/);
    fake.fail('chat', { kind: 'garbage', body: '{"object":"list","data":[]}', contentType: 'application/json' }, { times: 1 });
    const noChoices = await failureOf(chatCompletion({ baseUrl: fake.baseUrl }, request('talker', { stream: false }), call()));
    assert.match(noChoices.message, /^openai POST \/chat\/completions: the answer is not a chat completion: it has no choices/);
    fake.fail('chat', { kind: 'mid-stream', message: 'CUDA out of memory' }, { times: 1 });
    const midStream = await failureOf(chatCompletion({ baseUrl: fake.baseUrl }, request('talker'), call()));
    assert.equal(midStream.message, 'openai POST /chat/completions: the server reported an error mid-answer: CUDA out of memory');
  });

  it('reads the server\'s words from every error body shape, and previews one that is not JSON', async () => {
    const cases: [string, string, RegExp][] = [
      ['{"error":"Unauthorized"}', 'application/json', /HTTP 400: Unauthorized \(/],
      ['{"detail":"Not Found"}', 'application/json', /HTTP 400: Not Found \(/],
      ['{"detail":[{"loc":["body","messages"],"msg":"Field required"}]}', 'application/json', /HTTP 400: \[\{"loc":\["body","messages"\],"msg":"Field required"\}\] \(/],
      ['{"object":"error","message":"max_tokens is too large","type":"BadRequestError","code":400}', 'application/json', /HTTP 400: max_tokens is too large \(/],
      ['<html><body>Bad Gateway</body></html>', 'text/html', /HTTP 400: "<html><body>Bad Gateway<\/body><\/html>" \(/],
      ['', 'text/plain', /HTTP 400: an empty body \(/],
    ];
    for (const [body, contentType, expected] of cases) {
      fake.fail('chat', { kind: 'http', status: 400, body, contentType }, { times: 1 });
      const error = await failureOf(chatCompletion({ baseUrl: fake.baseUrl }, request('talker'), call()));
      assert.match(error.message, expected);
    }
  });

  it('reports a refused connection', async () => {
    const raw = await rawServer(() => undefined);
    const { baseUrl } = raw.server;
    await raw.close();
    const error = await failureOf(chatCompletion({ baseUrl }, request('talker'), call()));
    assert.ok(error instanceof InfrastructureError);
    assert.equal(error.message, 'openai POST /chat/completions: the connection to the model server failed (ECONNREFUSED)');
  });
});

describe('chatCompletion: the episode\'s signal', () => {
  it('rethrows the abort reason as it is, mid-stream', async () => {
    fake.fail('chat', { kind: 'stall' }, { times: 1 });
    const episode = new AbortController();
    const reason = new Error('wall time ran out');
    setTimeout(() => episode.abort(reason), 100);
    await assert.rejects(chatCompletion({ baseUrl: fake.baseUrl }, request('talker'), call({ signal: episode.signal, timeoutMs: 10_000 })), (error: unknown) => error === reason);
  });

  it('cuts a backoff short', async () => {
    fake.fail('chat', { kind: 'http', status: 429, retryAfter: 30 });
    const episode = new AbortController();
    const reason = new Error('wall time ran out');
    setTimeout(() => episode.abort(reason), 100);
    const started = performance.now();
    await assert.rejects(chatCompletion({ baseUrl: fake.baseUrl }, request('talker'), call({ signal: episode.signal })), (error: unknown) => error === reason);
    assert.ok(performance.now() - started < 5_000);
  });

  it('does not start when the episode is already over', async () => {
    const before = fake.requests.length;
    const reason = new Error('already over');
    await assert.rejects(chatCompletion({ baseUrl: fake.baseUrl }, request('talker'), call({ signal: AbortSignal.abort(reason) })), (error: unknown) => error === reason);
    assert.equal(fake.requests.length, before);
  });
});

describe('chatCompletion: the key', () => {
  it('never puts the key in a message, even when the server echoes it', async () => {
    const guarded = await startFakeOpenAI({ apiKey: 'sk-the-right-one', echoKeyOn401: true });
    try {
      const refused = await failureOf(chatCompletion({ baseUrl: guarded.baseUrl, apiKey: KEY }, request('fake-liar:1b'), call()));
      assert.ok(refused instanceof ModelServerRefused);
      assert.equal(refused.status, 401);
      assert.ok(guarded.requests.at(-1)!.headers.authorization === `Bearer ${KEY}`);
      assert.ok(!refused.message.includes(KEY), refused.message);
      assert.match(refused.message, /Incorrect API key provided: \[redacted\]/);
      assert.ok(!String(refused.stack).includes(KEY));

      for (const failure of [
        { kind: 'http', status: 500, echoKey: true },
        { kind: 'http', status: 400, echoKey: true },
        { kind: 'mid-stream', message: `engine died serving ${'sk-the-right-one'}` },
      ] as const) {
        guarded.clearFailures();
        guarded.fail('chat', failure);
        const error = await failureOf(chatCompletion({ baseUrl: guarded.baseUrl, apiKey: 'sk-the-right-one' }, request('fake-liar:1b'), call({ retries: 1 })));
        assert.ok(!error.message.includes('sk-the-right-one'), error.message);
        assert.match(error.message, /\[redacted\]/);
      }
    } finally {
      await guarded.close();
    }
  });
});

describe('openAIOrigin', () => {
  it('drops the /v1 prefix and trailing slashes', () => {
    assert.equal(openAIOrigin('http://127.0.0.1:8000/v1'), 'http://127.0.0.1:8000');
    assert.equal(openAIOrigin('http://127.0.0.1:8000/v1/'), 'http://127.0.0.1:8000');
    assert.equal(openAIOrigin('https://gpu.example/openai/v1'), 'https://gpu.example/openai');
    assert.equal(openAIOrigin('http://127.0.0.1:8080'), 'http://127.0.0.1:8080');
  });
});
