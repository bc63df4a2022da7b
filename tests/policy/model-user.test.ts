// Holds the model-backed user simulator to its contract, against the fake
// Ollama's scripted user model (a real HTTP server speaking Ollama's
// protocol): it answers what the agent asks from the brief in its system
// prompt and says it is done otherwise; it never sees tools, tool results or
// the agent's instructions; it sees the conversation role-swapped; a failing
// server is an InfrastructureError; and its sampling seed is pinned in its actor.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Message } from '../../src/core/conversation.js';
import { substream } from '../../src/core/random.js';
import type { UserFact } from '../../src/core/user-facts.js';
import { inspectModel, type ModelInfo } from '../../src/models/ollama/ollama-inspection.js';
import { DEFAULT_MODEL_TIMEOUT_MS } from '../../src/models/chat-model.js';
import { OllamaChatModel } from '../../src/models/ollama/ollama-chat-model.js';
import { ModelUser, readUserReply, USER_DONE_MARKER, userConversation, userSystemPrompt } from '../../src/policy/model-user.js';
import { InfrastructureError } from '../../src/policy/policy-contract.js';
import type { UserBrief } from '../../src/policy/user-simulator.js';
import { startFakeOllama, type FakeDecision, type FakeOllama } from '../fixtures/fake-ollama.js';

const fact = (id: string, answer: string, value: string, withheld: boolean, asked_by: string[]): UserFact => ({ id, value, withheld, asked_by, answer, question: `What is your ${asked_by[0]}?` });

const BRIEF: UserBrief = {
  goal: 'Get issue #4821 closed and learn who it was assigned to.',
  opening: 'Issue #4821 was fixed in the last release. Please close it.',
  facts: [
    fact('issue', 'It is issue #4821.', '#4821', false, ['issue number']),
    fact('release', 'It was fixed in release 2.14.1.', '2.14.1', true, ['release', 'version']),
    fact('reason', 'Close it as completed, not as a duplicate.', 'completed', true, ['reason']),
  ],
};

const SETTINGS = { temperature: 0.7, maxTokens: 96 };
const SIGNAL = () => new AbortController().signal;

/** The agent's side of an episode so far, ending with `last` (the agent's latest text). */
function conversation(last: string): Message[] {
  return [
    { role: 'system', content: 'You are an issue-tracker assistant. Use the tools.' },
    { role: 'user', content: BRIEF.opening },
    { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', name: 'get_issue', arguments: { number: 4821 } }] },
    { role: 'tool', tool_call_id: 'call_1', name: 'get_issue', content: '{"issue":{"number":4821,"assignee":"marta.quist3"}}', tool_result: { ok: true } },
    { role: 'assistant', content: last },
  ];
}

let fake: FakeOllama;
let info: ModelInfo;
before(async () => {
  fake = await startFakeOllama();
  info = await inspectModel(fake.url, 'fake-user:1b');
});
after(() => fake.close());

const user = (random = substream(3, 'user'), brief = BRIEF, model = info, timeoutMs = DEFAULT_MODEL_TIMEOUT_MS) => new ModelUser(new OllamaChatModel(model, timeoutMs), SETTINGS, brief, random);
const lastChat = () => fake.requestsTo('/api/chat').at(-1)!.body as { model: string; messages: { role: string; content: string }[]; options: Record<string, unknown>; stream: boolean } & Record<string, unknown>;

describe('ModelUser over Ollama: replies and done', () => {
  it('answers a question the brief can answer with the fact it asks for', async () => {
    const reply = await user().respond({ messages: conversation('Which release was it fixed in?') }, SIGNAL());
    assert.deepEqual(reply, { kind: 'reply', text: 'It was fixed in release 2.14.1.' });
  });

  it('is done when the agent asks nothing, or nothing the brief knows', async () => {
    assert.deepEqual(await user().respond({ messages: conversation('Closed #4821 as completed. It was assigned to marta.quist3.') }, SIGNAL()), { kind: 'done' });
    assert.deepEqual(await user().respond({ messages: conversation('Is there anything else?') }, SIGNAL()), { kind: 'done' });
  });

  it('keeps the words before the marker as a reply, and takes an empty or dressed-up marker for done', async () => {
    const said: Record<string, string> = {
      'say-thanks:1b': `Thanks, that is all. ${USER_DONE_MARKER}`,
      'say-nothing:1b': '   ',
      'say-bold:1b': `**${USER_DONE_MARKER}**`,
      'say-more:1b': `${USER_DONE_MARKER}\nUser: and another thing`,
    };
    for (const [name, text] of Object.entries(said)) fake.addModel({ name, family: 'qwen2', behaviour: (): FakeDecision => ({ kind: 'text', text }) });
    const answer = async (name: string) => user(substream(3, 'user'), BRIEF, await inspectModel(fake.url, name)).respond({ messages: conversation('Done.') }, SIGNAL());
    assert.deepEqual(await answer('say-thanks:1b'), { kind: 'reply', text: 'Thanks, that is all.' });
    assert.deepEqual(await answer('say-nothing:1b'), { kind: 'done' });
    assert.deepEqual(await answer('say-bold:1b'), { kind: 'done' });
    assert.deepEqual(await answer('say-more:1b'), { kind: 'done' });
  });

  it('reads replies the same way without a server', () => {
    assert.deepEqual(readUserReply(`  It was 2.14.1.\n`), { kind: 'reply', text: 'It was 2.14.1.' });
    assert.deepEqual(readUserReply(USER_DONE_MARKER), { kind: 'done' });
    assert.deepEqual(readUserReply(` "${USER_DONE_MARKER}".`), { kind: 'done' });
    assert.deepEqual(readUserReply(''), { kind: 'done' });
  });
});

describe('ModelUser over Ollama: what the model is sent', () => {
  it('casts the model as the user with the goal, the first message and every fact, the withheld ones to give only when asked', () => {
    assert.equal(
      userSystemPrompt(BRIEF),
      [
        'You are role-playing the user in a conversation with an AI assistant. You are the user, not the assistant: the assistant is working on your request, and you only answer it.',
        '',
        'Your goal: Get issue #4821 closed and learn who it was assigned to.',
        '',
        'The first message you sent the assistant was:',
        'Issue #4821 was fixed in the last release. Please close it.',
        '',
        'What you know (nothing else; never make up details):',
        'Already told in your first message:',
        '- It is issue #4821. (asked for by: issue number)',
        'Not told yet; give one only when the assistant asks for it:',
        '- It was fixed in release 2.14.1. (asked for by: release, version)',
        '- Close it as completed, not as a duplicate. (asked for by: reason)',
        '',
        'How to reply:',
        '- Write only your next message to the assistant, in a sentence or two, as this user would.',
        '- Answer what the assistant asks from what you know above, giving names, numbers and codes exactly as written there. If it asks for something you do not know, say that you do not know.',
        "- Do not do the assistant's work, and do not repeat your request unless asked.",
        '- When the assistant has done what you asked, or you have nothing to add, reply with exactly ###DONE### and nothing else.',
      ].join('\n'),
    );
    assert.match(userSystemPrompt({ ...BRIEF, facts: [] }), /\n\nYou know only what your first message says; never make up details\.\n\n/);
  });

  it('sends that prompt as the system message of a streamed /api/chat, with the seed, temperature and output cap', async () => {
    const simulator = user();
    await simulator.respond({ messages: conversation('What version?') }, SIGNAL());
    const body = lastChat();
    assert.equal(body.model, 'fake-user:1b');
    assert.equal(body.stream, true);
    assert.deepEqual(body.messages[0], { role: 'system', content: userSystemPrompt(BRIEF) });
    assert.deepEqual(body.options, { seed: (simulator.actor.options as { seed: number }).seed, temperature: 0.7, num_predict: 96 });
  });

  it('never sends tools, tool results, calls or the agent\'s instructions', async () => {
    await user().respond({ messages: conversation('Which release was it fixed in?') }, SIGNAL());
    const body = lastChat();
    assert.ok(!('tools' in body), 'no tools key at all');
    const sent = JSON.stringify(body.messages);
    for (const hidden of ['marta.quist3', 'get_issue', 'tool_calls', 'Use the tools']) assert.ok(!sent.includes(hidden), `${hidden} reached the user model`);
    assert.ok(body.messages.every((message) => message.role === 'system' || message.role === 'user' || message.role === 'assistant'));
  });

  it('swaps the roles: its own turns are the assistant\'s, the agent\'s words are the user\'s, and turns left next to each other are joined', async () => {
    const messages: Message[] = [
      { role: 'system', content: 'You are an issue-tracker assistant.' },
      { role: 'user', content: BRIEF.opening },
      { role: 'assistant', content: 'Which release fixed it?' },
      { role: 'user', content: 'Release 2.14.1.' },
      { role: 'assistant', content: 'Let me close it.', tool_calls: [{ id: 'call_1', name: 'close_issue', arguments: { number: 4821 } }] },
      { role: 'tool', tool_call_id: 'call_1', name: 'close_issue', content: '{"ok":true}', tool_result: { ok: true } },
      { role: 'assistant', content: '<tool_call>{"name": "get_user", </tool_call>', malformed_tool_call: { reason: '<tool_call> is not valid JSON' } },
      { role: 'tool', tool_call_id: null, name: null, content: 'malformed tool call', tool_result: { ok: false, kind: 'malformed_tool_call' } },
      { role: 'assistant', content: 'Closed #4821. Anything else?' },
    ];
    const swapped = [
      { role: 'assistant', content: BRIEF.opening },
      { role: 'user', content: 'Which release fixed it?' },
      { role: 'assistant', content: 'Release 2.14.1.' },
      { role: 'user', content: 'Let me close it.\n\nClosed #4821. Anything else?' },
    ];
    assert.deepEqual(userConversation(messages), swapped);
    await user().respond({ messages }, SIGNAL());
    assert.deepEqual(lastChat().messages.slice(1), swapped);
  });
});

describe('ModelUser over Ollama: actor and seed', () => {
  it('pins the model, its digest and the drawn seed in an actor with role "user"', () => {
    const simulator = user(substream(3, 'user'));
    const seed = substream(3, 'user').int(0, 2 ** 31 - 1);
    assert.deepEqual(simulator.actor, {
      role: 'user',
      kind: 'model',
      name: 'fake-user:1b',
      version: info.digest.replace(/^sha256:/, '').slice(0, 12),
      provider: 'ollama',
      digest: info.digest,
      family: 'qwen2',
      parameter_size: info.parameter_size,
      quantization: info.quantization,
      options: { seed, temperature: 0.7, num_predict: 96 },
      ollama_version: '0.12.3',
    });
    assert.deepEqual(user(substream(3, 'user')).actor, simulator.actor, 'the same substream, the same seed');
    assert.notDeepEqual(user(substream(4, 'user')).actor.options, simulator.actor.options, 'another episode, another seed');
  });
});

describe('ModelUser over Ollama: a failing server', () => {
  it('turns an HTTP error, a body that is not Ollama\'s and a cut stream into an InfrastructureError naming /api/chat', async () => {
    const cases: [Parameters<FakeOllama['fail']>[1], RegExp][] = [
      [{ kind: 'http', status: 500, error: 'llama runner process has terminated: exit status 2' }, /^ollama \/api\/chat failed: HTTP 500: llama runner process has terminated: exit status 2$/],
      [{ kind: 'garbage' }, /^ollama \/api\/chat: the answer is not Ollama's NDJSON stream: line 1 is not JSON \("<!DOCTYPE html>"\)$/],
      [{ kind: 'truncated', afterFrames: 1 }, /^ollama \/api\/chat: the stream was cut off in the middle of line 2/],
    ];
    for (const [failure, reason] of cases) {
      const lift = fake.fail('chat', failure, { model: 'fake-user:1b', times: 1 });
      await assert.rejects(user().respond({ messages: conversation('Which release?') }, SIGNAL()), (error: unknown) => {
        assert.ok(error instanceof InfrastructureError, String(error));
        assert.match(error.message, reason);
        return true;
      });
      lift();
    }
  });

  it('gives up on a silent server after its timeout, as an InfrastructureError', async () => {
    const lift = fake.fail('chat', { kind: 'hang' }, { model: 'fake-user:1b', times: 1 });
    const simulator = user(substream(3, 'user'), BRIEF, info, 200);
    await assert.rejects(simulator.respond({ messages: conversation('Which release?') }, SIGNAL()), (error: unknown) => {
      assert.ok(error instanceof InfrastructureError);
      assert.match(error.message, /^ollama \/api\/chat: the model server did not answer within 0\.2 s \(--model-timeout\)$/);
      return true;
    });
    lift();
  });

  it('passes the episode\'s abort on as it is: the wall time ran out, the server did not fail', async () => {
    const lift = fake.fail('chat', { kind: 'stall', afterFrames: 1 }, { model: 'fake-user:1b', times: 1 });
    const episode = new AbortController();
    const answer = user().respond({ messages: conversation('Which release?') }, episode.signal);
    setTimeout(() => episode.abort(new Error('wall time')), 100);
    await assert.rejects(answer, (error: unknown) => {
      assert.ok(!(error instanceof InfrastructureError), String(error));
      return true;
    });
    lift();
  });
});
