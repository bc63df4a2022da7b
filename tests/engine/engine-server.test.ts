// The engine's two wire protocols against a real model: the tiny qwen2 model
// scripts/tiny-model.sh trains here, loaded by llama.cpp through
// node-llama-cpp, tokenised by its real Qwen2 tokenizer and stopped by its
// real end-of-turn token. Nothing in this file is a fake: the answers are the
// model's, read by the same codec the factory's raw mode uses, on a turn of
// the committed sample the model answers with a call (fixtures/calling-turn.ts).

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Ollama } from 'ollama';
import { tinyModelPath } from '../../src/cli/engine-command.js';
import type { ToolDescriptor } from '../../src/core/conversation.js';
import { startEngine, type EngineServer } from '../../src/engine/engine-server.js';
import { hermesCodec } from '../../src/models/codecs/hermes-codec.js';
import { callingTurn, type SampleTurn } from '../fixtures/calling-turn.js';

let engine: EngineServer;
let modelPath: string;
let turn: SampleTurn;
before(async () => {
  modelPath = tinyModelPath();
  engine = await startEngine({ modelPath, name: 'tiny-qwen2:latest', version: 'episode-factory-engine test' });
  turn = await callingTurn(engine.url, 'tiny-qwen2');
});
after(async () => {
  await engine?.close();
});

const asOllamaTools = (tools: ToolDescriptor[]) => tools.map((tool) => ({ type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.input_schema } }));

async function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${engine.url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });
}

describe('engine: Ollama API', () => {
  it('lists the model with the sha256 of its file as the digest, and shows its family, template and tool capability', async () => {
    const client = new Ollama({ host: engine.url });
    assert.match((await client.version()).version, /episode-factory-engine/);
    const listed = (await client.list()).models;
    assert.equal(listed.length, 1);
    assert.equal(listed[0]!.name, 'tiny-qwen2:latest');
    assert.equal(listed[0]!.digest, createHash('sha256').update(readFileSync(modelPath)).digest('hex'));
    assert.equal(listed[0]!.details.family, 'qwen2');
    const shown = await client.show({ model: 'tiny-qwen2' });
    assert.equal(shown.details.family, 'qwen2');
    assert.ok(shown.capabilities.includes('tools'));
    assert.match(shown.template, /<tool_call>/, 'the chat template the GGUF carries');
    assert.equal((shown.model_info as unknown as Record<string, unknown>)['general.architecture'], 'qwen2');
  });

  it('generates from a raw prompt through the real tokenizer and stops at the real end-of-turn token', async () => {
    const { messages, tools, expectedTool } = turn;
    const prompt = hermesCodec.render(messages, tools);
    const answer = (await (await post('/api/generate', { model: 'tiny-qwen2', prompt, raw: true, stream: false, options: { temperature: 0, num_predict: 200 } })).json()) as Record<string, any>;
    assert.equal(answer.done, true);
    assert.equal(answer.done_reason, 'stop', 'it ended its turn itself, before the token limit');
    assert.ok(!answer.response.includes('<|im_end|>'), 'the end-of-turn token ends the text; it is not part of it');
    assert.ok(answer.prompt_eval_count > 0 && answer.eval_count > 0);
    const action = hermesCodec.parse(answer.response);
    assert.equal(action.kind, 'tool_call', `the model called a tool: ${answer.response}`);
    assert.equal(action.kind === 'tool_call' && action.name, expectedTool);
  });

  it('streams NDJSON frames whose text is the whole answer, and greedy decoding gives the same text every time', async () => {
    const { messages, tools } = turn;
    const prompt = hermesCodec.render(messages, tools);
    const whole = (await (await post('/api/generate', { model: 'tiny-qwen2', prompt, raw: true, stream: false, options: { temperature: 0, num_predict: 60 } })).json()) as Record<string, any>;
    const response = await post('/api/generate', { model: 'tiny-qwen2', prompt, raw: true, options: { temperature: 0, num_predict: 60 } });
    assert.match(response.headers.get('content-type')!, /application\/x-ndjson/);
    const frames = (await response.text()).trim().split('\n').map((line) => JSON.parse(line) as Record<string, any>);
    assert.ok(frames.length > 2, 'one frame per piece of text, then the closing frame');
    assert.deepEqual(frames.slice(0, -1).map((frame) => frame.done), frames.slice(0, -1).map(() => false));
    assert.equal(frames.at(-1)!.done, true);
    assert.equal(frames.map((frame) => frame.response).join(''), whole.response);
  });

  it('honours num_predict (done_reason "length") and the caller\'s stop strings', async () => {
    const { messages, tools } = turn;
    const prompt = hermesCodec.render(messages, tools);
    const short = (await (await post('/api/generate', { model: 'tiny-qwen2', prompt, raw: true, stream: false, options: { temperature: 0, num_predict: 3 } })).json()) as Record<string, any>;
    assert.equal(short.done_reason, 'length');
    assert.equal(short.eval_count, 3);
    const stopped = (await (await post('/api/generate', { model: 'tiny-qwen2', prompt, raw: true, stream: false, options: { temperature: 0, num_predict: 200, stop: ['"arguments"'] } })).json()) as Record<string, any>;
    assert.equal(stopped.done_reason, 'stop');
    assert.match(stopped.response, /"name": "\w+", $/, 'cut just before the stop string, which is not included');
  });

  it('keeps the conversation it already evaluated: the next turn evaluates only its new tokens', async () => {
    const { messages, tools } = turn;
    const first = (await (await post('/api/chat', { model: 'tiny-qwen2', messages, tools: asOllamaTools(tools), stream: false, options: { temperature: 0 } })).json()) as Record<string, any>;
    const again = (await (await post('/api/chat', { model: 'tiny-qwen2', messages: [...messages, { role: 'assistant', content: 'Done.' }, { role: 'user', content: 'Thanks!' }], tools: asOllamaTools(tools), stream: false, options: { temperature: 0 } })).json()) as Record<string, any>;
    const catalogTokens = 1000;
    assert.ok(first.prompt_eval_count > 0);
    assert.ok(again.prompt_eval_count < catalogTokens, `the system prompt and tools (over ${catalogTokens} tokens) stayed in the cache; evaluated ${again.prompt_eval_count}`);
  });

  it('answers /api/chat with tools as Ollama does: the call parsed into tool_calls with object arguments, whole or streamed', async () => {
    const { messages, tools, expectedTool } = turn;
    const client = new Ollama({ host: engine.url });
    const whole = await client.chat({ model: 'tiny-qwen2', messages: messages as never, tools: asOllamaTools(tools) as never, options: { temperature: 0 } });
    assert.equal(whole.message.tool_calls?.[0]?.function.name, expectedTool);
    assert.equal(typeof whole.message.tool_calls?.[0]?.function.arguments, 'object');
    const streamed = await client.chat({ model: 'tiny-qwen2', messages: messages as never, tools: asOllamaTools(tools) as never, options: { temperature: 0 }, stream: true });
    const calls: unknown[] = [];
    let content = '';
    for await (const part of streamed) {
      content += part.message.content;
      calls.push(...(part.message.tool_calls ?? []));
    }
    assert.equal(content.includes('<tool_call>'), false, 'a call is never streamed as text');
    assert.deepEqual(calls.map((call: any) => [call.function.name, call.function.arguments]), whole.message.tool_calls!.map((call) => [call.function.name, call.function.arguments]));
  });

  it('refuses what it cannot serve with Ollama\'s error bodies and status codes, and keeps serving', async () => {
    const unknown = await post('/api/chat', { model: 'llama3:8b', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(unknown.status, 404);
    assert.match(((await unknown.json()) as { error: string }).error, /model "llama3:8b" not found/);
    const broken = await post('/api/generate', '{"model": "tiny-qwen2", "prompt": ');
    assert.equal(broken.status, 400);
    assert.match(((await broken.json()) as { error: string }).error, /not JSON/);
    const badRole = await post('/api/chat', { model: 'tiny-qwen2', messages: [{ role: 'robot', content: 'hi' }] });
    assert.equal(badRole.status, 400);
    assert.match(((await badRole.json()) as { error: string }).error, /messages\[0\]\.role/);
    const tooLong = await post('/api/generate', { model: 'tiny-qwen2', prompt: 'word '.repeat(20_000), raw: true, stream: false });
    assert.equal(tooLong.status, 400);
    assert.match(((await tooLong.json()) as { error: string }).error, /the context holds \d+/);
    const loaded = (await (await post('/api/generate', { model: 'tiny-qwen2', prompt: '', stream: false })).json()) as Record<string, unknown>;
    assert.equal(loaded.done_reason, 'load');
  });

  it('stops generating when the client goes away, and answers the next request', async () => {
    const { messages, tools } = turn;
    const controller = new AbortController();
    const response = await fetch(`${engine.url}/api/generate`, { method: 'POST', body: JSON.stringify({ model: 'tiny-qwen2', prompt: hermesCodec.render(messages, tools), raw: true, options: { num_predict: 2000, temperature: 1, seed: 3 } }), signal: controller.signal });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    const next = (await (await post('/api/generate', { model: 'tiny-qwen2', prompt: 'Hello', raw: true, stream: false, options: { num_predict: 2 } })).json()) as Record<string, any>;
    assert.equal(next.done, true);
    assert.ok(next.eval_count >= 1 && next.eval_count <= 2, `a fresh answer of at most 2 tokens, got ${next.eval_count}`);
  });
});

describe('engine: OpenAI-compatible API', () => {
  it('lists the model and answers a chat completion with tool_calls whose arguments are a JSON string', async () => {
    const models = (await (await fetch(`${engine.url}/v1/models`)).json()) as { data: { id: string; owned_by: string }[] };
    assert.deepEqual(models.data.map((model) => model.id), ['tiny-qwen2:latest']);
    const { messages, tools, expectedTool } = turn;
    const answer = (await (await post('/v1/chat/completions', { model: 'tiny-qwen2:latest', messages, tools: asOllamaTools(tools), temperature: 0, max_tokens: 200 })).json()) as Record<string, any>;
    const choice = answer.choices[0];
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.equal(choice.message.tool_calls[0].function.name, expectedTool);
    assert.equal(typeof JSON.parse(choice.message.tool_calls[0].function.arguments), 'object');
    assert.ok(answer.usage.prompt_tokens > 0 && answer.usage.completion_tokens > 0);
  });

  it('streams server-sent events: the call in a delta of its own, the finish_reason, the usage, then [DONE]', async () => {
    const { messages, tools, expectedTool } = turn;
    const response = await post('/v1/chat/completions', { model: 'tiny-qwen2:latest', messages, tools: asOllamaTools(tools), temperature: 0, max_tokens: 200, stream: true, stream_options: { include_usage: true } });
    assert.match(response.headers.get('content-type')!, /text\/event-stream/);
    const events = (await response.text()).split('\n\n').filter(Boolean).map((event) => event.replace(/^data: /, ''));
    assert.equal(events.at(-1), '[DONE]');
    const chunks = events.slice(0, -1).map((event) => JSON.parse(event) as Record<string, any>);
    const calls = chunks.flatMap((chunk) => chunk.choices.flatMap((choice: any) => choice.delta.tool_calls ?? []));
    assert.equal(calls[0].function.name, expectedTool);
    assert.ok(chunks.some((chunk) => chunk.choices[0]?.finish_reason === 'tool_calls'));
    assert.ok(chunks.at(-1)!.usage.total_tokens > 0);
  });

  it('refuses an unknown model with an OpenAI error body', async () => {
    const response = await post('/v1/chat/completions', { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(response.status, 404);
    assert.match(((await response.json()) as { error: { message: string } }).error.message, /gpt-4o/);
  });
});
