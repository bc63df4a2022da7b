// Holds the Ollama policy to several tool calls in one turn, against the fake
// Ollama (a real HTTP server speaking Ollama's protocol): native calls become
// one tool_calls action whether the server sends them in one frame or one a
// frame, the textual fallback and raw mode read several calls through the
// family codec, a single call is still exactly a tool_call action, and a turn
// of several calls and its results go back to the server in order.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Message, ToolDescriptor } from '../../src/core/conversation.js';
import { substream } from '../../src/core/random.js';
import { codecByName } from '../../src/models/codecs/codec-registry.js';
import { inspectModel } from '../../src/models/ollama/ollama-inspection.js';
import { DEFAULT_MODEL_TIMEOUT_MS, type ModelMode } from '../../src/models/chat-model.js';
import { OllamaChatModel } from '../../src/models/ollama/ollama-chat-model.js';
import { ModelPolicy } from '../../src/policy/model-policy.js';
import type { Action } from '../../src/policy/policy-contract.js';
import { ISSUES_TOOLS } from '../../src/world/issues/issues-tools.js';
import { startFakeOllama, type FakeOllama } from '../fixtures/fake-ollama.js';

const TOOLS: ToolDescriptor[] = ISSUES_TOOLS.map((tool) => ({ name: tool.name, description: tool.description, input_schema: tool.inputSchema }));
const RELABEL = 'Issue #3907 is labelled bug, but it is really a feature request. Replace the bug label with enhancement, and tell me the issue\'s title so I can double-check.';
const LABEL_CALLS = [
  { name: 'remove_label', arguments: { number: 3907, label: 'bug' } },
  { name: 'add_label', arguments: { number: 3907, label: 'enhancement' } },
];
const TWO_CLOSES = [
  { name: 'close_issue', arguments: { number: 1 } },
  { name: 'close_issue', arguments: { number: 2 } },
];
const start = (user: string): Message[] => [
  { role: 'system', content: 'You manage an issue tracker.' },
  { role: 'user', content: user },
];

let fake: FakeOllama;
before(async () => {
  fake = await startFakeOllama();
  fake.addModel({ name: 'two-closes-text:1b', family: 'qwen2', behaviour: () => ({ kind: 'calls', calls: TWO_CLOSES }) });
  fake.addModel({
    name: 'half-broken:1b',
    family: 'qwen2',
    behaviour: () => ({ kind: 'malformed', text: '<tool_call>\n{"name": "close_issue", "arguments": {"number": 1}}\n</tool_call>\n<tool_call>\n{"name": "close_issue", "arguments": {"number": }}\n</tool_call>' }),
  });
});
after(() => fake.close());

async function policy(model: string, mode: ModelMode = 'native'): Promise<ModelPolicy> {
  const codec = codecByName('hermes');
  const chat = new OllamaChatModel(await inspectModel(fake.url, model), DEFAULT_MODEL_TIMEOUT_MS).inMode(mode, codec);
  return new ModelPolicy({ model: chat, settings: { mode, codec, temperature: 0.2, maxTokens: 512 }, random: substream(1, 'policy') });
}

const act = async (model: string, messages: Message[], mode: ModelMode = 'native'): Promise<Action> => (await policy(model, mode)).next({ messages, tools: TOOLS }, new AbortController().signal);

describe('ModelPolicy over Ollama: several calls in one turn', () => {
  it('native: several message.tool_calls, streamed a frame each, are one tool_calls action in order', async () => {
    assert.deepEqual(await act('fake-parallel:1b', start(RELABEL)), { kind: 'tool_calls', calls: LABEL_CALLS });
  });

  it('native: a single call is still exactly a tool_call action', async () => {
    assert.deepEqual(await act('fake-qwen:1b', start(RELABEL)), { kind: 'tool_call', name: 'remove_label', arguments: { number: 3907, label: 'bug' } });
  });

  it('native: several calls streamed together in one frame are one tool_calls action too', async () => {
    fake.addModel({ name: 'two-closes-native:1b', family: 'qwen2', behaviour: () => ({ kind: 'calls', calls: TWO_CLOSES }), nativeCalls: true, callsInOneFrame: true });
    assert.deepEqual(await act('two-closes-native:1b', start('Close 1 and 2.')), { kind: 'tool_calls', calls: TWO_CLOSES });
  });

  it('native fallback: several calls written as text the server did not parse are read by the codec', async () => {
    assert.deepEqual(await act('two-closes-text:1b', start('Close 1 and 2.')), { kind: 'tool_calls', calls: TWO_CLOSES });
  });

  it('native fallback: one unreadable call makes the turn malformed, and the reason says which', async () => {
    const action = await act('half-broken:1b', start('Close 1 and 2.'));
    assert.equal(action.kind, 'malformed_tool_call');
    assert.equal((action as { reason: string }).reason, '<tool_call> 2 of 2 is not valid JSON: unexpected "}" at offset 49');
  });

  it('raw: the family text of several calls is one tool_calls action', async () => {
    assert.deepEqual(await act('fake-parallel:1b', start(RELABEL), 'raw'), { kind: 'tool_calls', calls: LABEL_CALLS });
    const prompt = (fake.requestsTo('/api/generate').at(-1)!.body as { prompt: string }).prompt;
    assert.ok(prompt.endsWith(`${RELABEL}<|im_end|>\n<|im_start|>assistant\n`), prompt.slice(-200));
  });

  it('sends a turn of several calls back as one assistant message with every call, then each result in order with its tool name', async () => {
    const messages: Message[] = [
      ...start(RELABEL),
      {
        role: 'assistant',
        content: '',
        tool_calls: LABEL_CALLS.map((call, index) => ({ id: `call_${index + 1}`, ...call })),
      },
      { role: 'tool', tool_call_id: 'call_1', name: 'remove_label', content: JSON.stringify({ issue: { number: 3907, title: 'Allow exporting boards as CSV', labels: [] } }), tool_result: { ok: true } },
      {
        role: 'tool',
        tool_call_id: 'call_2',
        name: 'add_label',
        content: JSON.stringify({ issue: { number: 3907, title: 'Allow exporting boards as CSV', labels: ['enhancement'] } }),
        tool_result: { ok: true },
      },
    ];
    const before = fake.requestsTo('/api/chat').length;
    const action = await act('fake-parallel:1b', messages);
    assert.deepEqual(action, { kind: 'final_text', text: 'Done: #3907 "Allow exporting boards as CSV" is now labelled enhancement.' });
    const sent = (fake.requestsTo('/api/chat')[before]!.body as { messages: unknown[] }).messages;
    assert.deepEqual(sent.slice(2), [
      {
        role: 'assistant',
        content: '',
        tool_calls: LABEL_CALLS.map((call) => ({ function: call })),
      },
      { role: 'tool', content: (messages[3] as { content: string }).content, tool_name: 'remove_label' },
      { role: 'tool', content: (messages[4] as { content: string }).content, tool_name: 'add_label' },
    ]);
  });
});
