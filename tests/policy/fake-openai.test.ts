// Holds the fake OpenAI-compatible server (tests/fixtures/fake-openai.ts) to
// the wire protocol as vLLM and llama.cpp speak it (model lists in each
// shape, /props, /version, the SSE stream: role chunk first, tool-call
// fragments split mid-string and interleaved by index, finish_reason on the
// last chunk only, the usage chunk only when asked for, [DONE] last), to the
// same scripted agents as the fake Ollama (the same calls for the same
// conversation, a whole task solved turn by turn, calls as family text when
// the model has no parser), and to its knobs: a required key, failures scoped
// by times, after and model, and every request recorded.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { Ollama, type Tool } from 'ollama';
import { chatCompletion, type OpenAIMessage, type OpenAITool } from '../../src/models/openai/chat-completion.js';
import type { JsonObject } from '../../src/core/json-value.js';
import type { PhrasingRules, UserText } from '../../src/lanes/lane.js';
import { phrasingsOf } from '../../src/lanes/phrasing-grammar.js';
import { ISSUES_TOOLS } from '../../src/world/issues/issues-tools.js';
import { FAKE_MODELS, NOT_SURE, startFakeOllama } from '../fixtures/fake-ollama.js';
import { FAKE_CHAT_TEMPLATE, fakeOllamaDigest, startFakeOpenAI, type FakeOpenAI } from '../fixtures/fake-openai.js';
import { REPO_ROOT } from '../helpers.js';

const lane = JSON.parse(readFileSync(join(REPO_ROOT, 'lanes', 'tool-world-v1.json'), 'utf8')) as { system_prompt: string; phrasing?: PhrasingRules; tasks: { id: string; user: UserText }[] };
/** The task's last phrasing, with the given values. */
const render = (id: string, values: Record<string, string | number>) =>
  phrasingsOf(lane.tasks.find((task) => task.id === id)!.user, lane.phrasing)
    .at(-1)!
    .template.replace(/\{\{\s*([\w.]+)\s*\}\}/g, (_, key: string) => String(values[key] ?? assert.fail(`no value for ${key}`)));
const CLOSE = render('close-named-issue', { 'target.number': 4821, 'target.title': 'Sync stalls after token refresh' });
const RELABEL = render('relabel-issue', { 'target.number': 3907 });
const EMAIL = render('assignee-email', { 'target.number': 2788 });

const TOOLS: OpenAITool[] = ISSUES_TOOLS.map((tool) => ({ type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.inputSchema as JsonObject } }));
const start = (user: string): OpenAIMessage[] => [
  { role: 'system', content: lane.system_prompt },
  { role: 'user', content: user },
];

/** POSTs a chat completion and returns the raw SSE events (the JSON ones parsed, `[DONE]` as is). */
async function rawStream(fake: FakeOpenAI, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<{ status: number; contentType: string | null; events: unknown[] }> {
  const response = await fetch(`${fake.baseUrl}/chat/completions`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify({ stream: true, ...body }) });
  const text = await response.text();
  const events = text
    .split('\n\n')
    .filter((block) => block.startsWith('data: '))
    .map((block) => block.slice('data: '.length))
    .map((data) => (data === '[DONE]' ? data : JSON.parse(data)));
  return { status: response.status, contentType: response.headers.get('content-type'), events };
}

interface Chunk {
  choices: { index: number; delta: { role?: string; content?: string | null; tool_calls?: { index?: number; id?: string; function?: { name?: string; arguments?: string } }[] }; finish_reason: string | null }[];
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

let fake: FakeOpenAI;
before(async () => {
  fake = await startFakeOpenAI();
});
after(() => fake.close());
beforeEach(() => fake.clearFailures());

describe('fake OpenAI: model lists and server identity', () => {
  it('lists the scripted models in vLLM\'s shape and answers /version', async () => {
    const list = (await (await fetch(`${fake.baseUrl}/models`)).json()) as { object: string; data: Record<string, unknown>[] };
    assert.equal(list.object, 'list');
    assert.deepEqual(
      list.data.map((entry) => entry.id),
      FAKE_MODELS.map((model) => model.name),
    );
    for (const entry of list.data) {
      assert.deepEqual(Object.keys(entry).sort(), ['created', 'id', 'max_model_len', 'object', 'owned_by', 'parent', 'permission', 'root']);
      assert.equal(entry.object, 'model');
      assert.equal(entry.owned_by, 'vllm');
      assert.equal(entry.parent, null);
      assert.equal(entry.max_model_len, 32768);
    }
    assert.deepEqual(await (await fetch(`${fake.url}/version`)).json(), { version: '0.11.0' });
    assert.equal((await fetch(`${fake.url}/props`)).status, 404);
  });

  it('plays llama-server: its model list with meta, and /props', async () => {
    const llama = await startFakeOpenAI({ flavour: 'llama.cpp', contextSize: 8192, version: 'b7000-deadbeef' });
    try {
      const list = (await (await fetch(`${llama.baseUrl}/models`)).json()) as { models: unknown[]; data: { id: string; owned_by: string; meta: Record<string, number> }[] };
      assert.equal(list.models.length, FAKE_MODELS.length);
      assert.equal(list.data[0]!.owned_by, 'llamacpp');
      assert.equal(list.data[0]!.meta.n_ctx_train, 32768);
      const props = (await (await fetch(`${llama.url}/props`)).json()) as Record<string, unknown>;
      assert.equal(props.model_path, '/models/fake-qwen-1b-Q4_K_M.gguf');
      assert.equal(props.build_info, 'b7000-deadbeef');
      assert.equal(props.chat_template, FAKE_CHAT_TEMPLATE);
      assert.deepEqual((props.default_generation_settings as Record<string, unknown>).n_ctx, 8192);
      assert.equal((await fetch(`${llama.url}/version`)).status, 404);
    } finally {
      await llama.close();
    }
  });

  it('plays Ollama\'s /v1 with the same digests as the fake Ollama\'s /api/tags', async () => {
    const ollamaV1 = await startFakeOpenAI({ flavour: 'ollama' });
    const ollama = await startFakeOllama();
    try {
      const tags = (await (await fetch(`${ollamaV1.url}/api/tags`)).json()) as { models: { name: string; digest: string }[] };
      const real = await new Ollama({ host: ollama.url }).list();
      assert.deepEqual(
        tags.models.map((model) => [model.name, model.digest]),
        real.models.map((model) => [model.name, model.digest]),
      );
      assert.equal(tags.models[0]!.digest, fakeOllamaDigest('fake-qwen:1b'));
      assert.deepEqual(await (await fetch(`${ollamaV1.url}/api/version`)).json(), { version: '0.12.3' });
      const list = (await (await fetch(`${ollamaV1.baseUrl}/models`)).json()) as { data: Record<string, unknown>[] };
      assert.deepEqual(list.data[0], { id: 'fake-qwen:1b', object: 'model', created: 1_760_000_000, owned_by: 'library' });
    } finally {
      await Promise.all([ollamaV1.close(), ollama.close()]);
    }
  });
});

describe('fake OpenAI: the stream on the wire', () => {
  it('sends the role first, calls split mid-string and interleaved by index, finish_reason last, usage when asked, then [DONE]', async () => {
    const { status, contentType, events } = await rawStream(fake, { model: 'fake-parallel:1b', messages: start(RELABEL), tools: TOOLS, stream_options: { include_usage: true } });
    assert.equal(status, 200);
    assert.match(contentType!, /^text\/event-stream/);
    assert.equal(events.at(-1), '[DONE]');
    const chunks = events.slice(0, -1) as Chunk[];
    assert.deepEqual(chunks[0]!.choices[0]!.delta, { role: 'assistant', content: '' });
    const usage = chunks.at(-1)!;
    assert.deepEqual(usage.choices, []);
    assert.ok(usage.usage!.completion_tokens > 0);
    const body = chunks.slice(1, -1);
    const finishes = body.map((chunk) => chunk.choices[0]!.finish_reason);
    assert.deepEqual(finishes, [...finishes.slice(0, -1).map(() => null), 'tool_calls']);
    const fragments = body.flatMap((chunk) => chunk.choices[0]!.delta.tool_calls ?? []);
    const indexes = fragments.map((fragment) => fragment.index);
    assert.ok(indexes.some((index, at) => at > 0 && index! < indexes[at - 1]!), `interleaved: ${indexes.join(',')}`);
    const pieces = fragments.filter((fragment) => fragment.function?.arguments).map((fragment) => fragment.function!.arguments!);
    assert.ok(pieces.length > 4 && pieces.every((piece) => piece.length <= 7));
    // The id and name come with the first fragment of each index only.
    assert.deepEqual(
      fragments.filter((fragment) => fragment.id !== undefined).map((fragment) => [fragment.index, fragment.function?.name]),
      [
        [0, 'remove_label'],
        [1, 'add_label'],
      ],
    );
    const joined = [0, 1].map((index) => fragments.filter((fragment) => fragment.index === index).map((fragment) => fragment.function?.arguments ?? '').join(''));
    assert.deepEqual(joined.map((text) => JSON.parse(text)), [
      { number: 3907, label: 'bug' },
      { number: 3907, label: 'enhancement' },
    ]);
  });

  it('streams text token by token, and sends no usage chunk unless asked', async () => {
    const { events } = await rawStream(fake, { model: 'fake-qwen:1b', messages: start('What is the weather like?') });
    const chunks = events.slice(0, -1) as Chunk[];
    assert.ok(chunks.every((chunk) => chunk.choices.length === 1 && chunk.usage === undefined));
    assert.equal(chunks.map((chunk) => chunk.choices[0]!.delta.content ?? '').join(''), NOT_SURE);
    assert.ok(chunks.length > 3);
    assert.equal(chunks.at(-1)!.choices[0]!.finish_reason, 'stop');
  });
});

describe('fake OpenAI: the scripted agents', () => {
  it('makes the same calls as the fake Ollama for the same conversation', async () => {
    const ollama = await startFakeOllama();
    try {
      const client = new Ollama({ host: ollama.url });
      for (const [model, user] of [
        ['fake-qwen:1b', CLOSE],
        ['fake-parallel:1b', RELABEL],
        ['fake-llama:1b', EMAIL],
      ] as const) {
        const fromOllama = await client.chat({ model, messages: start(user) as { role: string; content: string }[], tools: TOOLS as Tool[], stream: false });
        const fromOpenAI = await chatCompletion({ baseUrl: fake.baseUrl }, { model, messages: start(user), tools: TOOLS, temperature: 0, seed: 1, max_tokens: 512, stream: true }, { timeoutMs: 2_000, signal: new AbortController().signal });
        assert.deepEqual(
          fromOpenAI.toolCalls.map((call) => ({ name: call.name, arguments: JSON.parse(call.arguments) })),
          fromOllama.message.tool_calls!.map((call) => ({ name: call.function.name, arguments: call.function.arguments })),
          model,
        );
        assert.ok(fromOpenAI.toolCalls.length > 0);
      }
    } finally {
      await ollama.close();
    }
  });

  it('solves a task turn by turn from the tool results it is sent back', async () => {
    const messages = start(EMAIL);
    const calls: string[] = [];
    for (let turn = 0; turn < 5; turn++) {
      const answer = await chatCompletion({ baseUrl: fake.baseUrl }, { model: 'fake-qwen:1b', messages, tools: TOOLS, temperature: 0, seed: 7, max_tokens: 512, stream: turn % 2 === 0 }, { timeoutMs: 2_000, signal: new AbortController().signal });
      if (answer.toolCalls.length === 0) {
        assert.equal(answer.text, 'Issue #2788 is assigned to Ines Okafor (ines.okafor27); their email is ines.okafor27@tracker.example.');
        assert.deepEqual(calls, ['get_issue', 'get_user']);
        return;
      }
      const [toolCall] = answer.toolCalls;
      calls.push(toolCall!.name);
      messages.push({ role: 'assistant', content: null, tool_calls: [{ id: toolCall!.id!, type: 'function', function: { name: toolCall!.name, arguments: toolCall!.arguments } }] });
      const result = toolCall!.name === 'get_issue' ? { issue: { number: 2788, assignee: 'ines.okafor27' } } : { user: { login: 'ines.okafor27', name: 'Ines Okafor', email: 'ines.okafor27@tracker.example' } };
      messages.push({ role: 'tool', tool_call_id: toolCall!.id!, content: JSON.stringify(result) });
    }
    assert.fail('the agent did not finish in 5 turns');
  });

  it('writes calls as its family\'s text when it has no parser: Hermes, Llama 3, Mistral', async () => {
    const textual = await startFakeOpenAI({
      models: [
        { name: 'hermes', family: 'qwen2', behaviour: 'agent', nativeCalls: false },
        { name: 'llama', family: 'llama', behaviour: 'agent', nativeCalls: false },
        { name: 'mistral', family: 'mistral', behaviour: 'agent', nativeCalls: false },
      ],
    });
    try {
      const ask = (model: string) => chatCompletion({ baseUrl: textual.baseUrl }, { model, messages: start(CLOSE), tools: TOOLS, temperature: 0, seed: 1, max_tokens: 512, stream: false }, { timeoutMs: 2_000, signal: new AbortController().signal });
      const hermes = await ask('hermes');
      assert.equal(hermes.text, '<tool_call>\n{"name": "close_issue", "arguments": {"number": 4821, "reason": "completed"}}\n</tool_call>');
      assert.deepEqual(hermes.toolCalls, []);
      assert.equal(hermes.finishReason, 'stop');
      assert.equal((await ask('llama')).text, '<|python_tag|>{"name": "close_issue", "parameters": {"number": 4821, "reason": "completed"}}');
      assert.equal((await ask('mistral')).text, '[TOOL_CALLS] [{"name": "close_issue", "arguments": {"number": 4821, "reason": "completed"}}]');
    } finally {
      await textual.close();
    }
  });

  it('breaks its JSON when sloppy, and answers the 500 of a crashed engine when broken', async () => {
    const sloppy = await chatCompletion({ baseUrl: fake.baseUrl }, { model: 'fake-sloppy:1b', messages: start(CLOSE), tools: TOOLS, temperature: 0, seed: 1, max_tokens: 512, stream: true }, { timeoutMs: 2_000, signal: new AbortController().signal });
    assert.equal(sloppy.text, '<tool_call>\n{"name": "close_issue", "arguments": {"number": \n</tool_call>');
    const response = await fetch(`${fake.baseUrl}/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'fake-broken:1b', messages: start(CLOSE) }) });
    assert.equal(response.status, 500);
    assert.deepEqual(((await response.json()) as { error: Record<string, unknown> }).error, { message: 'llama runner process has terminated: exit status 2', type: 'InternalServerError', param: null, code: 500 });
  });

  it('gives the same calls with the same ids for the same request', async () => {
    const body = { model: 'fake-parallel:1b', messages: start(RELABEL), tools: TOOLS, stream: false };
    const first = (await (await fetch(`${fake.baseUrl}/chat/completions`, { method: 'POST', body: JSON.stringify(body) })).json()) as { id: string; choices: unknown[] };
    const second = (await (await fetch(`${fake.baseUrl}/chat/completions`, { method: 'POST', body: JSON.stringify(body) })).json()) as { id: string; choices: unknown[] };
    assert.deepEqual(second.choices, first.choices);
    assert.match(first.id, /^chatcmpl-\d+$/);
    assert.notEqual(first.id, second.id);
  });
});

describe('fake OpenAI: key, failures and the record of requests', () => {
  it('refuses a request without the key with the flavour\'s 401, and leaves public paths open', async () => {
    const vllm = await startFakeOpenAI({ apiKey: 'sk-fake' });
    const llama = await startFakeOpenAI({ flavour: 'llama.cpp', apiKey: 'sk-fake' });
    try {
      const refused = await fetch(`${vllm.baseUrl}/models`);
      assert.equal(refused.status, 401);
      assert.deepEqual(await refused.json(), { error: 'Unauthorized' });
      assert.equal((await fetch(`${vllm.baseUrl}/models`, { headers: { Authorization: 'Bearer sk-fake' } })).status, 200);
      assert.equal((await fetch(`${vllm.url}/version`)).status, 200);
      // llama-server leaves its model list open and guards the rest.
      assert.equal((await fetch(`${llama.baseUrl}/models`)).status, 200);
      const chat = await fetch(`${llama.baseUrl}/chat/completions`, { method: 'POST', body: '{}' });
      assert.equal(chat.status, 401);
      assert.deepEqual(await chat.json(), { error: { code: 401, message: 'Invalid API Key', type: 'authentication_error' } });
      assert.equal(llama.requests.at(-1)!.headers.authorization, undefined);
    } finally {
      await Promise.all([vllm.close(), llama.close()]);
    }
  });

  it('scopes failures by times, after and model, and sends Retry-After on a 429', async () => {
    fake.fail('chat', { kind: 'http', status: 429, retryAfter: 2, message: 'slow down' }, { model: 'fake-liar:1b', after: 1, times: 1 });
    const ask = (model: string) => fetch(`${fake.baseUrl}/chat/completions`, { method: 'POST', body: JSON.stringify({ model, messages: start(CLOSE) }) });
    assert.equal((await ask('fake-qwen:1b')).status, 200);
    assert.equal((await ask('fake-liar:1b')).status, 200);
    const limited = await ask('fake-liar:1b');
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get('retry-after'), '2');
    assert.deepEqual(await limited.json(), { error: { message: 'slow down', type: 'RateLimitError', param: null, code: 429 } });
    assert.equal((await ask('fake-liar:1b')).status, 200);
    const lift = fake.fail('*', { kind: 'garbage' });
    assert.match(await (await fetch(`${fake.baseUrl}/models`)).text(), /^<!DOCTYPE html>/);
    lift();
    assert.equal((await fetch(`${fake.baseUrl}/models`)).status, 200);
  });

  it('records every request with its method, path, headers and parsed body', async () => {
    const before = fake.requests.length;
    await fetch(`${fake.baseUrl}/chat/completions`, { method: 'POST', headers: { Authorization: 'Bearer sk-seen', 'Content-Type': 'application/json' }, body: JSON.stringify({ model: 'fake-qwen:1b', messages: start(CLOSE), seed: 42, temperature: 0.2 }) });
    const [seen] = fake.requests.slice(before);
    assert.equal(seen!.method, 'POST');
    assert.equal(seen!.path, '/v1/chat/completions');
    assert.equal(seen!.headers.authorization, 'Bearer sk-seen');
    assert.deepEqual({ seed: (seen!.body as JsonObject).seed, temperature: (seen!.body as JsonObject).temperature }, { seed: 42, temperature: 0.2 });
    assert.equal(fake.chatBodies().at(-1)!.seed, 42);
  });

  it('answers errors in the OpenAI shape: an unknown model, a body that is not JSON, an unknown path', async () => {
    const unknown = await fetch(`${fake.baseUrl}/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'gpt-9', messages: start(CLOSE) }) });
    assert.equal(unknown.status, 404);
    assert.deepEqual(await unknown.json(), { error: { message: 'The model `gpt-9` does not exist.', type: 'NotFoundError', param: null, code: 404 } });
    const broken = await fetch(`${fake.baseUrl}/chat/completions`, { method: 'POST', body: '{"model":' });
    assert.equal(broken.status, 400);
    assert.equal(((await broken.json()) as { error: { type: string } }).error.type, 'BadRequestError');
    const missing = await fetch(`${fake.baseUrl}/v1/embeddings`);
    assert.deepEqual(await missing.json(), { detail: 'Not Found' });
  });
});
