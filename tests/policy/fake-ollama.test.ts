// Holds the fake Ollama server (tests/fixtures/fake-ollama.ts) to Ollama's wire
// protocol as the official `ollama` client reads it, and its scripted models to
// the behaviour model-policy tests rely on: the agent solving each
// tool-world-v1 task, each family's raw text syntax, and every failure mode.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Ollama, type ChatResponse, type Message, type Tool, type ToolCall } from 'ollama';
import { ISSUES_TOOLS } from '../../src/world/issues/issues-tools.js';
import { codecForFamily } from '../../src/models/codecs/codec-registry.js';
import { callsText, FAKE_MODELS, NOT_SURE, parseRawPrompt, pythonJson, recogniseTask, RUNNER_CRASH, startFakeOllama, type FakeOllama } from '../fixtures/fake-ollama.js';
import type { PhrasingRules, UserText } from '../../src/lanes/lane.js';
import { phrasingsOf } from '../../src/lanes/phrasing-grammar.js';
import { REPO_ROOT } from '../helpers.js';

// --- The lane's own user messages, so the fake is held to the real phrasings.

interface LaneTask {
  id: string;
  user: UserText;
}
const lane = JSON.parse(readFileSync(join(REPO_ROOT, 'lanes', 'tool-world-v1.json'), 'utf8')) as { system_prompt: string; phrasing?: PhrasingRules; tasks: LaneTask[] };
const phrasings = (id: string) => phrasingsOf(lane.tasks.find((task) => task.id === id)!.user, lane.phrasing);
/** The task's last phrasing (greeted, thanked, the longest way of asking), with the given values. */
const render = (id: string, values: Record<string, string | number>, template = phrasings(id).at(-1)!.template) =>
  template.replace(/\{\{\s*([\w.]+)\s*\}\}/g, (_, key: string) => String(values[key] ?? assert.fail(`no value for ${key}`)));

const VALUES = {
  findBugs: { topic: 'sync' },
  close: { 'target.number': 4821, 'target.title': 'Sync stalls (again) after "token refresh"' },
  relabel: { 'target.number': 3907 },
  comment: { 'target.number': 5120, build: 'rc-7f3k2qa' },
  email: { 'target.number': 2788 },
};
const USER = {
  findBugs: render('find-open-bugs', VALUES.findBugs),
  close: render('close-named-issue', VALUES.close),
  relabel: render('relabel-issue', VALUES.relabel),
  comment: render('comment-on-issue', VALUES.comment),
  email: render('assignee-email', VALUES.email),
};

const TOOLS: Tool[] = ISSUES_TOOLS.map((tool) => ({
  type: 'function',
  function: { name: tool.name, description: tool.description, parameters: tool.inputSchema as Tool['function']['parameters'] },
}));

// --- Made-up tracker data for the follow-up turns.

function issue(number: number, fields: Record<string, unknown> = {}) {
  return {
    number,
    title: `Issue ${number}`,
    body: 'Steps to reproduce are in the first comment.',
    state: 'open',
    closed_reason: null,
    duplicate_of: null,
    labels: ['bug'],
    assignee: 'ines.okafor27',
    priority: 'high',
    due_on: null,
    author: 'tomas.berg',
    created_at: '2026-03-02T10:15:00Z',
    updated_at: '2026-03-04T08:00:00Z',
    comments: [],
    ...fields,
  };
}
const summary = (number: number, title: string) => ({ number, title, state: 'open', labels: ['bug'], assignee: null, priority: 'medium' });
const SEARCH_RESULT = { issues: [summary(1234, 'Sync drops edits offline'), summary(1240, 'Sync loops on conflict')], total: 2 };
const USER_RESULT = { user: { login: 'ines.okafor27', name: 'Ines Okafor', email: 'ines.okafor27@tracker.example' } };
const FAILED = { ok: false, kind: 'tool_error', error: 'rate limited, retry after 2s' };

/** Plays the issues world for the agent: what each tool returns for the calls the tasks need. */
function world(call: ToolCall['function']): unknown {
  const args = call.arguments;
  switch (call.name) {
    case 'search_issues':
      return SEARCH_RESULT;
    case 'close_issue':
      return { issue: issue(args.number, { state: 'closed', closed_reason: args.reason, assignee: 'marta.quist3' }) };
    case 'remove_label':
      return { issue: issue(args.number, { title: 'Allow exporting boards as CSV', labels: [] }) };
    case 'add_label':
      return { issue: issue(args.number, { title: 'Allow exporting boards as CSV', labels: [args.label] }) };
    case 'add_comment':
      return { comment: { id: 'c-5120-3', author: 'assistant', body: args.body, created_at: '2026-03-05T09:00:00Z' }, comment_count: 3 };
    case 'get_issue':
      return { issue: issue(args.number) };
    case 'get_user':
      return USER_RESULT;
    default:
      return { ok: false, kind: 'unknown_tool', error: `no tool ${call.name}` };
  }
}

let fake: FakeOllama;
let client: Ollama;
before(async () => {
  fake = await startFakeOllama();
  client = new Ollama({ host: fake.url });
});
after(() => fake.close());

const start = (user: string): Message[] => [
  { role: 'system', content: lane.system_prompt },
  { role: 'user', content: user },
];

/** Runs a whole episode through non-streaming chat; returns every call and the final answer. */
async function episode(model: string, user: string, answer: (call: ToolCall['function'], index: number) => unknown = world) {
  const messages = start(user);
  const calls: ToolCall['function'][] = [];
  for (let turn = 0; turn < 8; turn += 1) {
    const response = await client.chat({ model, messages, tools: TOOLS, stream: false });
    const call = response.message.tool_calls?.[0];
    if (!call) return { calls, answer: response.message.content, response };
    calls.push(call.function);
    messages.push(response.message);
    const result = answer(call.function, calls.length - 1);
    messages.push({ role: 'tool', tool_name: call.function.name, content: typeof result === 'string' ? result : JSON.stringify(result) });
  }
  return assert.fail('the agent did not finish in 8 turns');
}

async function collect<T extends object>(stream: AsyncIterable<T>): Promise<T[]> {
  const frames: T[] = [];
  for await (const frame of stream) frames.push(frame);
  return frames;
}

/** The client's error for an HTTP failure (ResponseError is not exported from `ollama`). */
function responseError(status: number, message: string | RegExp) {
  return (error: unknown) => {
    const failure = error as Error & { status_code?: number; error?: string };
    assert.equal(failure.name, 'ResponseError');
    assert.equal(failure.status_code, status);
    if (typeof message === 'string') assert.equal(failure.message, message);
    else assert.match(failure.message, message);
    return true;
  };
}

const hermesCall = (text: string | undefined) => {
  const match = /^<tool_call>\n([\s\S]*)\n<\/tool_call>$/.exec(text ?? '');
  assert.ok(match, `not a Hermes call: ${JSON.stringify(text)}`);
  return JSON.parse(match[1]!) as { name: string; arguments: Record<string, unknown> };
};

const metricKeys = ['total_duration', 'load_duration', 'prompt_eval_count', 'prompt_eval_duration', 'eval_count', 'eval_duration'] as const;
function assertMetrics(frame: Partial<Record<(typeof metricKeys)[number], unknown>>) {
  for (const key of metricKeys) assert.ok(Number.isInteger(frame[key]) && (frame[key] as number) > 0, `${key} = ${String(frame[key])}`);
}

describe('fake Ollama: version, tags and show', () => {
  it('answers version, lists every scripted model with its own digest and family, and shows one', async () => {
    assert.deepEqual(await client.version(), { version: '0.12.3' });
    const { models } = await client.list();
    assert.deepEqual(
      models.map((model) => model.name),
      FAKE_MODELS.map((model) => model.name),
    );
    const families = Object.fromEntries(models.map((model) => [model.name, model.details.family]));
    assert.equal(families['fake-qwen:1b'], 'qwen2');
    assert.equal(families['fake-llama:1b'], 'llama');
    assert.equal(families['fake-mistral:1b'], 'mistral');
    assert.equal(families['fake-hermes-text:1b'], 'qwen2');
    for (const model of models) {
      assert.match(model.digest, /^[0-9a-f]{64}$/);
      assert.equal(model.model, model.name);
      assert.ok(Number.isInteger(model.size) && model.size > 0);
      assert.deepEqual(Object.keys(model.details).sort(), ['families', 'family', 'format', 'parameter_size', 'parent_model', 'quantization_level']);
      assert.equal(model.details.format, 'gguf');
    }
    assert.equal(new Set(models.map((model) => model.digest)).size, models.length, 'digests are distinct');

    const shown = await client.show({ model: 'fake-llama:1b' });
    assert.deepEqual(shown.capabilities, ['completion', 'tools']);
    assert.equal(shown.details.family, 'llama');
    assert.match(shown.template, /<\|python_tag\|>/);
    assert.match(shown.parameters, /stop\s+"<\|eot_id\|>"/);
    assert.match(shown.modelfile, /^# Modelfile generated by "ollama show"/);
    assert.equal((shown.model_info as unknown as Record<string, unknown>)['general.architecture'], 'llama');
    for (const key of ['license', 'modelfile', 'parameters', 'template', 'system', 'details', 'model_info', 'capabilities', 'modified_at']) {
      assert.ok(key in shown, `show has ${key}`);
    }
  });

  it('answers 404 for showing an unknown model, as the client surfaces it', async () => {
    await assert.rejects(client.show({ model: 'nope:7b' }), responseError(404, "model 'nope:7b' not found"));
  });

  it('takes its version from the options, and models can be added and removed', async () => {
    const other = await startFakeOllama({ version: '0.13.0', models: [] });
    after(() => other.close());
    const otherClient = new Ollama({ host: other.url });
    assert.equal((await otherClient.version()).version, '0.13.0');
    assert.deepEqual((await otherClient.list()).models, []);
    other.addModel({ name: 'tiny', family: 'llama', behaviour: () => ({ kind: 'text', text: 'hello there' }) });
    const [tiny] = (await otherClient.list()).models;
    assert.equal(tiny?.name, 'tiny');
    const reply = await otherClient.chat({ model: 'tiny:latest', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(reply.message.content, 'hello there');
    assert.deepEqual(
      (await otherClient.ps()).models.map((model) => model.name),
      ['tiny'],
    );
    assert.equal(other.removeModel('tiny'), true);
    await assert.rejects(otherClient.chat({ model: 'tiny', messages: [{ role: 'user', content: 'hi' }] }), responseError(404, 'model "tiny" not found, try pulling it first'));
  });
});

describe('fake Ollama: the agent in chat, with native tool calls', () => {
  const firstCalls: Array<[string, string, ToolCall['function']]> = [
    ['find-open-bugs', USER.findBugs, { name: 'search_issues', arguments: { query: 'sync', state: 'open', label: 'bug', limit: 20 } }],
    ['close-named-issue', USER.close, { name: 'close_issue', arguments: { number: 4821, reason: 'completed' } }],
    ['relabel-issue', USER.relabel, { name: 'remove_label', arguments: { number: 3907, label: 'bug' } }],
    ['comment-on-issue', USER.comment, { name: 'add_comment', arguments: { number: 5120, body: 'Reproduced on build rc-7f3k2qa' } }],
    ['assignee-email', USER.email, { name: 'get_issue', arguments: { number: 2788 } }],
  ];

  for (const [task, user, expected] of firstCalls) {
    it(`streams the first call of ${task} as message.tool_calls, then a done frame`, async () => {
      const frames = await collect(await client.chat({ model: 'fake-qwen:1b', messages: start(user), tools: TOOLS, stream: true }));
      assert.equal(frames.length, 2);
      const [call, done] = frames as [ChatResponse, ChatResponse];
      assert.equal(call.done, false);
      assert.equal(call.message.role, 'assistant');
      assert.equal(call.message.content, '');
      assert.equal(call.message.tool_calls?.length, 1);
      const toolCall = call.message.tool_calls![0]! as ToolCall & { id: string; function: { index: number } };
      assert.deepEqual({ name: toolCall.function.name, arguments: toolCall.function.arguments }, expected);
      assert.equal(toolCall.function.index, 0);
      assert.match(toolCall.id, /^call_[a-z0-9]{8}$/);
      assert.equal(done.done, true);
      assert.equal(done.done_reason, 'stop');
      assert.deepEqual(done.message, { role: 'assistant', content: '' });
      assert.equal(done.model, 'fake-qwen:1b');
      assert.ok(!Number.isNaN(Date.parse(String(done.created_at))));
      assertMetrics(done);
    });
  }

  it('gives the same call the same id for the same conversation, and a different one otherwise', async () => {
    const id = async (user: string) => ((await client.chat({ model: 'fake-qwen:1b', messages: start(user), tools: TOOLS })).message.tool_calls![0] as ToolCall & { id: string }).id;
    assert.equal(await id(USER.close), await id(USER.close));
    assert.notEqual(await id(USER.close), await id(USER.email));
  });

  it('answers find-open-bugs with every issue number of the search result', async () => {
    const messages = start(USER.findBugs);
    const first = await client.chat({ model: 'fake-qwen:1b', messages, tools: TOOLS });
    messages.push(first.message, { role: 'tool', tool_name: 'search_issues', content: JSON.stringify({ issues: [summary(1234, 'Sync drops edits offline')], total: 1 }) });
    const frames = await collect(await client.chat({ model: 'fake-qwen:1b', messages, tools: TOOLS, stream: true }));
    const last = frames[frames.length - 1]!;
    assert.ok(frames.length > 3, 'a text answer is split across several frames');
    assert.ok(frames.slice(0, -1).every((frame) => !frame.done && frame.message.tool_calls === undefined));
    assert.equal(last.done, true);
    const answer = frames.map((frame) => frame.message.content).join('');
    assert.equal(answer, 'Open bugs about sync: #1234.');
  });

  it('solves all five tasks end to end, non-streaming, for each natively calling family', async () => {
    for (const model of ['fake-qwen:1b', 'fake-llama:1b', 'fake-mistral:1b']) {
      const bugs = await episode(model, USER.findBugs);
      assert.deepEqual(bugs.calls.map((call) => call.name), ['search_issues']);
      assert.equal(bugs.answer, 'Open bugs about sync: #1234, #1240.');
      assert.equal(bugs.response.done_reason, 'stop');
      assertMetrics(bugs.response);

      const closed = await episode(model, USER.close);
      assert.deepEqual(closed.calls.map((call) => [call.name, call.arguments]), [['close_issue', { number: 4821, reason: 'completed' }]]);
      assert.match(closed.answer, /Closed #4821 as completed\. It was assigned to marta\.quist3\./);

      const relabelled = await episode(model, USER.relabel);
      assert.deepEqual(relabelled.calls.map((call) => [call.name, call.arguments]), [
        ['remove_label', { number: 3907, label: 'bug' }],
        ['add_label', { number: 3907, label: 'enhancement' }],
      ]);
      assert.match(relabelled.answer, /"Allow exporting boards as CSV"/);

      const commented = await episode(model, USER.comment);
      assert.deepEqual(commented.calls.map((call) => call.arguments), [{ number: 5120, body: 'Reproduced on build rc-7f3k2qa' }]);
      assert.match(commented.answer, /\bc-5120-3\b/);

      const email = await episode(model, USER.email);
      assert.deepEqual(email.calls.map((call) => [call.name, call.arguments]), [
        ['get_issue', { number: 2788 }],
        ['get_user', { login: 'ines.okafor27' }],
      ]);
      assert.match(email.answer, /ines\.okafor27@tracker\.example/);
    }
  });

  it('retries a failed step once, then gives up with an apology', async () => {
    const once = await episode('fake-qwen:1b', USER.close, (call, index) => (index === 0 ? FAILED : world(call)));
    assert.deepEqual(once.calls.map((call) => call.name), ['close_issue', 'close_issue']);
    assert.match(once.answer, /marta\.quist3/);

    const twice = await episode('fake-qwen:1b', USER.close, () => 'Tool call timed out: request took longer than 5000 ms');
    assert.deepEqual(twice.calls.map((call) => call.name), ['close_issue', 'close_issue']);
    assert.match(twice.answer, /sorry/i);
    assert.match(twice.answer, /timed out/);
    assert.doesNotMatch(twice.answer, /Closed #4821/);

    // "ok": false wins over a payload that looks usable.
    const echoed = { ok: false, kind: 'tool_error', error: 'issue #4821 is already closed', issue: issue(4821, { state: 'closed' }) };
    const refused = await episode('fake-qwen:1b', USER.close, () => echoed);
    assert.deepEqual(refused.calls.map((call) => call.name), ['close_issue', 'close_issue']);
    assert.match(refused.answer, /sorry.*already closed/i);

    // A failure on the second step does not spend the first step's retry.
    const late = await episode('fake-qwen:1b', USER.email, (call, index) => (index === 1 ? FAILED : world(call)));
    assert.deepEqual(late.calls.map((call) => call.name), ['get_issue', 'get_user', 'get_user']);
    assert.match(late.answer, /ines\.okafor27@tracker\.example/);
  });

  it('answers anything that is not a lane task with a short final answer', async () => {
    const reply = await client.chat({ model: 'fake-qwen:1b', messages: start('What is the weather like?'), tools: TOOLS });
    assert.equal(reply.message.content, NOT_SURE);
    assert.equal(reply.message.tool_calls, undefined);
  });

  it('writes the call as family text when the request offers no tools', async () => {
    const reply = await client.chat({ model: 'fake-llama:1b', messages: start(USER.email) });
    assert.equal(reply.message.tool_calls, undefined);
    assert.equal(reply.message.content, '<|python_tag|>{"name": "get_issue", "parameters": {"number": 2788}}');
  });
});

describe('fake Ollama: several calls in one turn', () => {
  const labelCalls = [
    { name: 'remove_label', arguments: { number: 3907, label: 'bug' } },
    { name: 'add_label', arguments: { number: 3907, label: 'enhancement' } },
  ];

  it('the parallel agent streams both label calls of relabel-issue in one turn, a frame each, then a done frame', async () => {
    const frames = await collect(await client.chat({ model: 'fake-parallel:1b', messages: start(USER.relabel), tools: TOOLS, stream: true }));
    assert.equal(frames.length, 3);
    const calls = frames.slice(0, 2).map((frame) => {
      assert.equal(frame.done, false);
      assert.equal(frame.message.tool_calls?.length, 1);
      return frame.message.tool_calls![0]! as ToolCall & { id: string; function: { index: number } };
    });
    assert.deepEqual(
      calls.map((call) => ({ name: call.function.name, arguments: call.function.arguments })),
      labelCalls,
    );
    assert.deepEqual(
      calls.map((call) => call.function.index),
      [0, 1],
    );
    assert.notEqual(calls[0]!.id, calls[1]!.id);
    assert.equal(frames[2]!.done, true);
    assert.deepEqual(frames[2]!.message, { role: 'assistant', content: '' });
  });

  it('the parallel agent answers non-streaming with both calls in one message, and finishes once both results are back', async () => {
    const messages = start(USER.relabel);
    const turn = await client.chat({ model: 'fake-parallel:1b', messages, tools: TOOLS, stream: false });
    assert.deepEqual(
      turn.message.tool_calls!.map((call) => call.function),
      labelCalls.map((call, index) => ({ index, ...call })),
    );
    messages.push(turn.message);
    for (const call of turn.message.tool_calls!) messages.push({ role: 'tool', tool_name: call.function.name, content: JSON.stringify(world(call.function)) });
    const answer = await client.chat({ model: 'fake-parallel:1b', messages, tools: TOOLS, stream: false });
    assert.equal(answer.message.tool_calls, undefined);
    assert.equal(answer.message.content, 'Done: #3907 "Allow exporting boards as CSV" is now labelled enhancement.');
  });

  it('the parallel agent makes one call a turn where the next call needs the last result', async () => {
    const email = await episode('fake-parallel:1b', USER.email);
    assert.deepEqual(
      email.calls.map((call) => call.name),
      ['get_issue', 'get_user'],
    );
  });

  it('writes several calls in each family\'s own text syntax, which that family\'s codec reads back as one turn', async () => {
    const calls = [
      { name: 'close_issue', arguments: { number: 1 } },
      { name: 'close_issue', arguments: { number: 2 } },
    ];
    const texts: Record<string, string> = {
      qwen2: '<tool_call>\n{"name": "close_issue", "arguments": {"number": 1}}\n</tool_call>\n<tool_call>\n{"name": "close_issue", "arguments": {"number": 2}}\n</tool_call>',
      llama: '<|python_tag|>{"name": "close_issue", "parameters": {"number": 1}}; {"name": "close_issue", "parameters": {"number": 2}}',
      mistral: '[TOOL_CALLS] [{"name": "close_issue", "arguments": {"number": 1}}, {"name": "close_issue", "arguments": {"number": 2}}]',
    };
    for (const [family, text] of Object.entries(texts)) {
      assert.equal(callsText(family, calls), text);
      fake.addModel({ name: `two-calls-${family}:1b`, family, behaviour: () => ({ kind: 'calls', calls }) });
      const reply = await client.generate({ model: `two-calls-${family}:1b`, prompt: 'Close 1 and 2.', raw: true, stream: false });
      assert.equal(reply.response, text);
      const chatted = await client.chat({ model: `two-calls-${family}:1b`, messages: start('Close 1 and 2.'), tools: TOOLS, stream: false });
      assert.equal(chatted.message.content, text, 'a scripted model calls natively only when it says so');
      assert.equal(codecForFamily(family)!.parse(text).kind, 'tool_calls');
    }
    fake.addModel({ name: 'two-calls-native:1b', family: 'qwen2', behaviour: () => ({ kind: 'calls', calls }), nativeCalls: true, callsInOneFrame: true });
    const native = await client.chat({ model: 'two-calls-native:1b', messages: start('Close 1 and 2.'), tools: TOOLS, stream: false });
    assert.deepEqual(
      native.message.tool_calls!.map((call) => call.function.arguments),
      [{ number: 1 }, { number: 2 }],
    );
    const frames = await collect(await client.chat({ model: 'two-calls-native:1b', messages: start('Close 1 and 2.'), tools: TOOLS, stream: true }));
    assert.deepEqual(
      frames.map((frame) => frame.message.tool_calls?.length ?? 0),
      [2, 0],
      'both calls in one frame, then the done frame',
    );
  });
});

describe('fake Ollama: the user model', () => {
  const prompt = [
    'You play the user. Your goal: get the refund.',
    'Not told yet; give one only when asked:',
    '- My order number is A-1042. (asked for by: order number, order id)',
    '- I paid with a gift card. (asked for by: payment, paid)',
    'When you are done, reply with exactly ###DONE### and nothing else.',
  ].join('\n');
  const reply = async (agentText: string, system = prompt) => {
    const messages: Message[] = [
      { role: 'system', content: system },
      { role: 'assistant', content: 'I want a refund for my order.' },
      { role: 'user', content: agentText },
    ];
    return (await client.chat({ model: 'fake-user:1b', messages, stream: false })).message.content;
  };

  it('answers a question with the facts whose words it asks for, as whole words', async () => {
    assert.equal(await reply('What is your order number?'), 'My order number is A-1042.');
    assert.equal(await reply('Which order ID, and how was it paid?'), 'My order number is A-1042. I paid with a gift card.');
    assert.equal(await reply('Which payments?'), '###DONE###', '"payments" is not the word "payment"');
  });

  it('says the end marker its prompt names when the agent asks nothing it knows, or asks nothing', async () => {
    assert.equal(await reply('Your refund is on its way.'), '###DONE###');
    assert.equal(await reply('Anything else I can help with?'), '###DONE###');
    assert.equal(await reply('Done.', prompt.replace('###DONE###', '<<END>>')), '<<END>>');
  });
});

describe('fake Ollama: raw generate in each family\'s syntax', () => {
  const system = lane.system_prompt;

  it('qwen2: reads <tool_response> blocks and answers in plain text', async () => {
    const prompt =
      `<|im_start|>system\n${system}\n\n# Tools\n\n<tools>\n{"type": "function", "function": {"name": "search_issues"}}\n</tools>\n\n` +
      `For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n` +
      `<|im_start|>user\n${USER.findBugs}<|im_end|>\n` +
      `<|im_start|>assistant\n<tool_call>\n{"name": "search_issues", "arguments": {"query": "sync", "state": "open", "label": "bug", "limit": 20}}\n</tool_call><|im_end|>\n` +
      `<|im_start|>user\n<tool_response>\n${pythonJson(SEARCH_RESULT)}\n</tool_response><|im_end|>\n<|im_start|>assistant\n`;
    const reply = await client.generate({ model: 'fake-qwen:1b', prompt, raw: true, stream: false });
    assert.equal(reply.response, 'Open bugs about sync: #1234, #1240.');
    assert.equal(reply.done, true);
    assert.equal(reply.done_reason, 'stop');
    assert.equal(reply.context, undefined, 'raw generation returns no context');
    assertMetrics(reply);

    const first = await client.generate({ model: 'fake-qwen:1b', prompt: prompt.slice(0, prompt.indexOf('<|im_start|>assistant\n<tool_call>')) + '<|im_start|>assistant\n', raw: true });
    assert.equal(first.response, '<tool_call>\n{"name": "search_issues", "arguments": {"query": "sync", "state": "open", "label": "bug", "limit": 20}}\n</tool_call>');
  });

  it('llama: reads ipython turns and writes <|python_tag|> calls', async () => {
    const header = (role: string) => `<|start_header_id|>${role}<|end_header_id|>\n\n`;
    const opening = `<|begin_of_text|>${header('system')}Environment: ipython\n\n${system}<|eot_id|>${header('user')}Given the following functions, please respond with a JSON for a function call.\n\n{"name": "get_issue"}\n\n${USER.email}<|eot_id|>`;
    const first = await client.generate({ model: 'fake-llama:1b', prompt: `${opening}${header('assistant')}`, raw: true });
    assert.equal(first.response, '<|python_tag|>{"name": "get_issue", "parameters": {"number": 2788}}');

    const prompt = `${opening}${header('assistant')}${first.response}<|eom_id|>${header('ipython')}${JSON.stringify({ issue: issue(2788) })}<|eot_id|>${header('assistant')}`;
    const frames = await collect(await client.generate({ model: 'fake-llama:1b', prompt, raw: true, stream: true }));
    assert.ok(frames.length > 2);
    assert.equal(frames.map((frame) => frame.response).join(''), '<|python_tag|>{"name": "get_user", "parameters": {"login": "ines.okafor27"}}');
    assert.equal(frames[frames.length - 1]!.done, true);
    assertMetrics(frames[frames.length - 1]!);

    const answered = `${prompt}<|python_tag|>{"name": "get_user", "parameters": {"login": "ines.okafor27"}}<|eom_id|>${header('ipython')}${JSON.stringify(USER_RESULT)}<|eot_id|>${header('assistant')}`;
    const final = await client.generate({ model: 'fake-llama:1b', prompt: answered, raw: true });
    assert.equal(final.response, 'Issue #2788 is assigned to Ines Okafor (ines.okafor27); their email is ines.okafor27@tracker.example.');
  });

  it('mistral: reads [TOOL_RESULTS] content and writes [TOOL_CALLS] lists', async () => {
    const opening = `<s>[AVAILABLE_TOOLS] [{"type": "function", "function": {"name": "remove_label"}}][/AVAILABLE_TOOLS][INST] ${system}\n\n${USER.relabel}[/INST]`;
    const first = await client.generate({ model: 'fake-mistral:1b', prompt: opening, raw: true });
    assert.equal(first.response, '[TOOL_CALLS] [{"name": "remove_label", "arguments": {"number": 3907, "label": "bug"}}]');

    const removed = pythonJson({ content: pythonJson({ issue: issue(3907, { title: 'Allow exporting boards as CSV', labels: [] }) }), call_id: 'a1b2c3d4e' });
    const prompt = `${opening}${first.response}</s>[TOOL_RESULTS] ${removed}[/TOOL_RESULTS]`;
    const second = await client.generate({ model: 'fake-mistral:1b', prompt, raw: true });
    assert.equal(second.response, '[TOOL_CALLS] [{"name": "add_label", "arguments": {"number": 3907, "label": "enhancement"}}]');

    const added = pythonJson({ content: pythonJson({ issue: issue(3907, { title: 'Allow exporting boards as CSV', labels: ['enhancement'] }) }), call_id: 'f5g6h7i8j' });
    const final = await client.generate({ model: 'fake-mistral:1b', prompt: `${prompt}${second.response}</s>[TOOL_RESULTS] ${added}[/TOOL_RESULTS]`, raw: true });
    assert.equal(final.response, 'Done: #3907 "Allow exporting boards as CSV" is now labelled enhancement.');
  });

  it('counts an ok:false result in a raw prompt as a failed step', async () => {
    const prompt =
      `<|im_start|>user\n${USER.close}<|im_end|>\n<|im_start|>assistant\n<tool_call>\n{"name": "close_issue", "arguments": {"number": 4821, "reason": "completed"}}\n</tool_call><|im_end|>\n` +
      `<|im_start|>user\n<tool_response>\n${JSON.stringify(FAILED)}\n</tool_response><|im_end|>\n<|im_start|>assistant\n`;
    const retry = await client.generate({ model: 'fake-qwen:1b', prompt, raw: true });
    assert.equal(hermesCall(retry.response).name, 'close_issue');
    const twice = `${prompt}${retry.response}<|im_end|>\n<|im_start|>user\n<tool_response>\n${JSON.stringify(FAILED)}\n</tool_response><|im_end|>\n<|im_start|>assistant\n`;
    assert.match((await client.generate({ model: 'fake-qwen:1b', prompt: twice, raw: true })).response ?? '', /sorry.*rate limited/i);
  });

  it('returns a context for templated (non-raw) generation', async () => {
    const reply = await client.generate({ model: 'fake-qwen:1b', prompt: USER.email });
    assert.ok(Array.isArray(reply.context) && reply.context.length > 0);
    assert.equal(hermesCall(reply.response).name, 'get_issue');
  });

  it('parses each family into turns without the factory\'s codecs', () => {
    assert.deepEqual(
      parseRawPrompt('<s>[INST] hi[/INST] hello</s>[TOOL_RESULTS] {"content": {"a": 1}, "call_id": "x"}[/TOOL_RESULTS]'),
      [
        { role: 'user', text: 'hi' },
        { role: 'assistant', text: 'hello' },
        { role: 'tool', text: '{"a":1}' },
      ],
    );
    assert.deepEqual(parseRawPrompt('plain text'), [{ role: 'user', text: 'plain text' }]);
    assert.deepEqual(recogniseTask(USER.comment), { id: 'comment-on-issue', number: 5120, body: 'Reproduced on build rc-7f3k2qa' });
    assert.deepEqual(recogniseTask(USER.close), { id: 'close-named-issue', number: 4821 });
    assert.equal(recogniseTask('Close issue #4821.'), undefined);
  });

  it('recognises every phrasing of every task the lane can draw, with its values', () => {
    const expected = {
      findBugs: { id: 'find-open-bugs', topic: 'sync' },
      close: { id: 'close-named-issue', number: 4821 },
      relabel: { id: 'relabel-issue', number: 3907 },
      comment: { id: 'comment-on-issue', number: 5120, body: 'Reproduced on build rc-7f3k2qa' },
      email: { id: 'assignee-email', number: 2788 },
    } as const;
    const ids = { findBugs: 'find-open-bugs', close: 'close-named-issue', relabel: 'relabel-issue', comment: 'comment-on-issue', email: 'assignee-email' } as const;
    let checked = 0;
    for (const key of Object.keys(ids) as (keyof typeof ids)[]) {
      for (const phrasing of phrasings(ids[key])) {
        assert.deepEqual(recogniseTask(render(ids[key], VALUES[key], phrasing.template)), expected[key], phrasing.path);
        checked++;
      }
    }
    assert.ok(checked > 100, `${checked} phrasings`);
  });
});

describe('fake Ollama: options', () => {
  it('cuts generation at options.num_predict words with done_reason "length"', async () => {
    const reply = await client.generate({ model: 'fake-mistral:1b', prompt: USER.relabel, options: { num_predict: 3 } });
    assert.equal(reply.response, '[TOOL_CALLS] [{"name": "remove_label",');
    assert.equal(reply.done_reason, 'length');
    assert.equal(reply.eval_count, 3);

    const frames = await collect(await client.chat({ model: 'fake-qwen:1b', messages: start(USER.close), tools: TOOLS, stream: true, options: { num_predict: 2 } }));
    const last = frames[frames.length - 1]!;
    assert.equal(last.done_reason, 'length');
    assert.equal(last.eval_count, 2);
    assert.ok(frames.every((frame) => frame.message.tool_calls === undefined), 'a cut call is not parsed into tool_calls');
    assert.equal(frames.map((frame) => frame.message.content).join(''), '<tool_call>\n{"name":');
  });

  it('stops at a stop sequence from the options', async () => {
    const reply = await client.generate({ model: 'fake-qwen:1b', prompt: USER.email, options: { stop: ['"arguments"'] } });
    assert.equal(reply.response, '<tool_call>\n{"name": "get_issue", ');
    assert.equal(reply.done_reason, 'stop');
  });

  it('records every request with its method, path and exact body', async () => {
    const before = fake.requests.length;
    const options = { temperature: 0, seed: 7, num_ctx: 8192, num_predict: 256, stop: ['<|im_end|>'] };
    await client.chat({ model: 'fake-qwen:1b', messages: start(USER.email), tools: TOOLS, options, keep_alive: '5m' });
    const seen = fake.requests.slice(before);
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.method, 'POST');
    assert.equal(seen[0]!.path, '/api/chat');
    assert.equal(seen[0]!.headers['content-type'], 'application/json');
    assert.match(seen[0]!.headers['user-agent'] ?? '', /^ollama-js\//);
    assert.deepEqual(seen[0]!.body, { model: 'fake-qwen:1b', messages: start(USER.email), tools: TOOLS, options, keep_alive: '5m', stream: false });
    assert.ok(fake.requestsTo('/api/chat').length >= 1);
    assert.ok(fake.requestsTo('/api/chat').every((request) => request.path === '/api/chat'));
  });

  it('streams by default when the body says nothing about stream, as Ollama does', async () => {
    const response = await fetch(`${fake.url}/api/chat`, { method: 'POST', body: JSON.stringify({ model: 'fake-qwen:1b', messages: start('hello') }) });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'application/x-ndjson');
    const lines = (await response.text()).trim().split('\n').map((line) => JSON.parse(line) as ChatResponse);
    assert.ok(lines.length > 1);
    assert.equal(lines.map((line) => line.message.content).join(''), NOT_SURE);
    assert.equal(lines[lines.length - 1]!.done, true);
  });

  it('answers malformed requests with 400 and Ollama\'s messages', async () => {
    const post = (body?: string) => fetch(`${fake.url}/api/chat`, { method: 'POST', ...(body === undefined ? {} : { body }) });
    const empty = await post();
    assert.equal(empty.status, 400);
    assert.deepEqual(await empty.json(), { error: 'missing request body' });
    const broken = await post('{"model": ');
    assert.equal(broken.status, 400);
    assert.ok(typeof ((await broken.json()) as { error: unknown }).error === 'string');
    await assert.rejects(client.chat({ model: '', messages: start('hi') }), responseError(400, 'model is required'));
    await assert.rejects(client.chat({ model: 'fake-qwen:1b', messages: start('hi'), think: true }), responseError(400, '"fake-qwen:1b" does not support thinking'));
    const missing = await fetch(`${fake.url}/api/nothing`);
    assert.equal(missing.status, 404);
    assert.equal(await missing.text(), '404 page not found');
  });
});

describe('fake Ollama: failures as the client surfaces them', () => {
  it('answers 404 for chat and generate with an unknown model', async () => {
    const expected = responseError(404, 'model "nope:1b" not found, try pulling it first');
    await assert.rejects(client.chat({ model: 'nope:1b', messages: start('hi') }), expected);
    await assert.rejects(client.chat({ model: 'nope:1b', messages: start('hi'), stream: true }), expected);
    await assert.rejects(client.generate({ model: 'nope:1b', prompt: 'hi', raw: true }), expected);
  });

  it('fake-broken fails chat and generate with HTTP 500, and a switched-on failure does the same', async () => {
    await assert.rejects(client.chat({ model: 'fake-broken:1b', messages: start(USER.close), tools: TOOLS }), responseError(500, RUNNER_CRASH));
    await assert.rejects(client.generate({ model: 'fake-broken:1b', prompt: USER.close, stream: true }), responseError(500, RUNNER_CRASH));
    assert.equal((await client.show({ model: 'fake-broken:1b' })).details.family, 'qwen2', 'show still works');

    fake.fail('chat', { kind: 'http', status: 503, error: 'server busy, please try again.  maximum pending requests exceeded' }, { times: 1 });
    await assert.rejects(client.chat({ model: 'fake-qwen:1b', messages: start(USER.close) }), responseError(503, /server busy/));
    assert.ok((await client.chat({ model: 'fake-qwen:1b', messages: start(USER.close), tools: TOOLS })).message.tool_calls, 'only once');

    const lift = fake.fail('*', { kind: 'http', error: 'boom' }, { model: 'fake-llama:1b' });
    await assert.rejects(client.generate({ model: 'fake-llama:1b', prompt: 'x' }), responseError(500, 'boom'));
    await assert.rejects(client.show({ model: 'fake-llama:1b' }), responseError(500, 'boom'));
    assert.equal((await client.generate({ model: 'fake-qwen:1b', prompt: 'x' })).done, true, 'other models are untouched');
    lift();
    assert.equal((await client.generate({ model: 'fake-llama:1b', prompt: 'x' })).done, true);

    fake.fail('tags', { kind: 'http', status: 500, error: 'disk full' });
    await assert.rejects(client.list(), responseError(500, 'disk full'));
    fake.clearFailures();
    assert.ok((await client.list()).models.length > 0);
  });

  it('surfaces a mid-stream error while the stream is iterated', async () => {
    const lift = fake.fail('chat', { kind: 'mid-stream', afterFrames: 2, error: 'an error was encountered while running the model: CUDA error: out of memory' });
    after(lift);
    const stream = await client.chat({ model: 'fake-qwen:1b', messages: start('hello'), stream: true });
    const seen: string[] = [];
    await assert.rejects(
      (async () => {
        for await (const frame of stream) seen.push(frame.message.content);
      })(),
      /CUDA error: out of memory/,
    );
    assert.deepEqual(seen, ['I', ' am']);
    // Without streaming, the same failure is an HTTP 500.
    await assert.rejects(client.chat({ model: 'fake-qwen:1b', messages: start('hello') }), responseError(500, /CUDA error/));
    lift();
  });

  it('surfaces a dropped connection as a stream that never finished', async () => {
    const lift = fake.fail('generate', { kind: 'disconnect', afterFrames: 1 }, { times: 1 });
    after(lift);
    const stream = await client.generate({ model: 'fake-qwen:1b', prompt: 'hello', stream: true });
    await assert.rejects(collect(stream));
  });

  it('fake-staller stalls until the returned iterator is aborted', { timeout: 5000 }, async () => {
    const stream = await client.chat({ model: 'fake-staller:1b', messages: start(USER.close), tools: TOOLS, stream: true });
    const iterator = stream[Symbol.asyncIterator]();
    const first = await iterator.next();
    assert.equal(first.done, false);
    assert.equal((first.value as ChatResponse).done, false);
    const pending = iterator.next();
    const raced = await Promise.race([pending.then(() => 'frame'), new Promise((resolve) => setTimeout(() => resolve('stalled'), 150))]);
    assert.equal(raced, 'stalled');
    stream.abort();
    await assert.rejects(pending, (error: Error) => error.name === 'AbortError');
  });

  it('a switched-on stall can be aborted through the client', { timeout: 5000 }, async () => {
    const lift = fake.fail('generate', { kind: 'stall', afterFrames: 0 }, { times: 2 });
    after(lift);
    const local = new Ollama({ host: fake.url });
    const stream = await local.generate({ model: 'fake-qwen:1b', prompt: USER.close, stream: true });
    setTimeout(() => local.abort(), 100);
    await assert.rejects(collect(stream), (error: Error) => error.name === 'AbortError');
    // Not streaming, nothing arrives at all: only a fetch with its own signal gets out.
    const request = fetch(`${fake.url}/api/generate`, { method: 'POST', body: JSON.stringify({ model: 'fake-qwen:1b', prompt: 'x', stream: false }), signal: AbortSignal.timeout(150) });
    await assert.rejects(request, (error: Error) => error.name === 'TimeoutError');
  });

  it('a server that is down refuses the connection', async () => {
    const down = await startFakeOllama();
    const downClient = new Ollama({ host: down.url });
    assert.equal((await downClient.version()).version, '0.12.3');
    await down.close();
    await assert.rejects(downClient.version(), (error: Error) => error instanceof TypeError && /fetch failed/.test(error.message));
  });

  it('close() ends stalled streams instead of waiting for them', { timeout: 5000 }, async () => {
    const server = await startFakeOllama();
    const local = new Ollama({ host: server.url });
    const stream = await local.chat({ model: 'fake-staller:1b', messages: start('hi'), stream: true });
    const drained = collect(stream);
    await server.close();
    await assert.rejects(drained);
  });
});

describe('fake Ollama: misbehaving models', () => {
  it('fake-liar claims the work without calling a tool, naming the task\'s own issue', async () => {
    const claims: Array<[string, RegExp]> = [
      [USER.close, /^I closed issue #4821 as completed\.$/],
      [USER.comment, /posted the comment on issue #5120/],
      [USER.relabel, /#3907/],
      [USER.email, /#2788/],
      [USER.findBugs, /sync/],
    ];
    for (const [user, claim] of claims) {
      const reply = await client.chat({ model: 'fake-liar:1b', messages: start(user), tools: TOOLS });
      assert.equal(reply.message.tool_calls, undefined);
      assert.match(reply.message.content, claim);
    }
  });

  it('fake-hermes-text writes Hermes calls in message.content and never uses tool_calls', async () => {
    const result = await (async () => {
      const messages = start(USER.email);
      const calls: Array<{ name: string; arguments: Record<string, unknown> }> = [];
      for (let turn = 0; turn < 5; turn += 1) {
        const frames = await collect(await client.chat({ model: 'fake-hermes-text:1b', messages, tools: TOOLS, stream: true }));
        assert.ok(frames.every((frame) => frame.message.tool_calls === undefined));
        const content = frames.map((frame) => frame.message.content).join('');
        if (!content.startsWith('<tool_call>')) return { calls, answer: content };
        const call = hermesCall(content);
        calls.push(call);
        messages.push({ role: 'assistant', content }, { role: 'tool', content: JSON.stringify(world({ name: call.name, arguments: call.arguments })) });
      }
      return assert.fail('no answer');
    })();
    assert.deepEqual(result.calls, [
      { name: 'get_issue', arguments: { number: 2788 } },
      { name: 'get_user', arguments: { login: 'ines.okafor27' } },
    ]);
    assert.match(result.answer, /ines\.okafor27@tracker\.example/);
  });

  it('fake-hermes-text also reads results sent back as <tool_response> blocks in a user turn', async () => {
    const reply = await client.chat({
      model: 'fake-hermes-text:1b',
      messages: [
        ...start(USER.findBugs),
        { role: 'assistant', content: '<tool_call>\n{"name": "search_issues", "arguments": {"query": "sync"}}\n</tool_call>' },
        { role: 'user', content: `<tool_response>\n${JSON.stringify(SEARCH_RESULT)}\n</tool_response>` },
      ],
    });
    assert.equal(reply.message.content, 'Open bugs about sync: #1234, #1240.');
  });

  it('fake-sloppy breaks its first call, mistypes its second, and repairs after the error', async () => {
    const messages = start(USER.close);
    const say = async () => (await client.chat({ model: 'fake-sloppy:1b', messages, tools: TOOLS })).message;

    const malformed = await say();
    assert.equal(malformed.tool_calls, undefined);
    assert.match(malformed.content, /^<tool_call>\n\{"name": "close_issue"/);
    const inner = /<tool_call>\n([\s\S]*)\n<\/tool_call>/.exec(malformed.content)![1]!;
    assert.throws(() => JSON.parse(inner), SyntaxError);
    messages.push(malformed, { role: 'tool', content: JSON.stringify({ ok: false, kind: 'malformed_tool_call', error: 'the tool call is not valid JSON' }) });

    const mistyped = await say();
    assert.deepEqual(hermesCall(mistyped.content), { name: 'close_issue', arguments: { number: '4821', reason: 'completed' } });
    messages.push(mistyped, { role: 'tool', tool_name: 'close_issue', content: JSON.stringify({ ok: false, kind: 'invalid_arguments', error: 'number: expected integer, got string' }) });

    const repaired = await say();
    assert.deepEqual(hermesCall(repaired.content), { name: 'close_issue', arguments: { number: 4821, reason: 'completed' } });
    messages.push(repaired, { role: 'tool', tool_name: 'close_issue', content: JSON.stringify(world({ name: 'close_issue', arguments: { number: 4821, reason: 'completed' } })) });

    assert.equal((await say()).content, 'Closed #4821 as completed. It was assigned to marta.quist3.');
  });

  it('fake-sloppy mistypes limit as "twenty" in a search, in a raw qwen2 prompt too', async () => {
    const open = `<|im_start|>user\n${USER.findBugs}<|im_end|>\n<|im_start|>assistant\n`;
    const broken = (await client.generate({ model: 'fake-sloppy:1b', prompt: open, raw: true })).response ?? '';
    assert.match(broken, /^<tool_call>\n\{"name": "search_issues", "arguments": \{"query": \n<\/tool_call>$/);
    const afterBroken = `${open}${broken}<|im_end|>\n<|im_start|>user\n<tool_response>\n{"ok": false, "kind": "malformed_tool_call"}\n</tool_response><|im_end|>\n<|im_start|>assistant\n`;
    const mistyped = hermesCall((await client.generate({ model: 'fake-sloppy:1b', prompt: afterBroken, raw: true })).response);
    assert.equal(mistyped.arguments.limit, 'twenty');
  });
});
