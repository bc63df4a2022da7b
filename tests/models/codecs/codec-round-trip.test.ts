import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AssistantMessage, Message } from '../../../src/core/conversation.js';
import { CODECS } from '../../../src/models/codecs/codec-registry.js';
import type { CodecName, ModelCodec } from '../../../src/models/codecs/model-codec.js';
import { TOOLS } from './codec-fixtures.js';

/** What each family's prompt ends with, so that a turn can be cut out of two renders. */
const GENERATION_PROMPT: Record<CodecName, string> = {
  hermes: '<|im_start|>assistant\n',
  llama3: '<|start_header_id|>assistant<|end_header_id|>\n\n',
  mistral: '',
};

const before: Message[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Find the login bugs.' },
];

/** The text of the assistant turn as the family renders it: what the model would have written. */
function turnText(codec: ModelCodec, turn: AssistantMessage): string {
  const prompt = codec.render(before, TOOLS);
  const whole = codec.render([...before, turn], TOOLS);
  assert.ok(whole.startsWith(prompt), `${codec.name}: the prompt is not a prefix of the prompt with one more turn`);
  const ending = GENERATION_PROMPT[codec.name];
  assert.ok(whole.endsWith(ending));
  return whole.slice(prompt.length, whole.length - ending.length);
}

const calls = [
  { name: 'search_issues', arguments: { query: 'login', limit: 'twenty' } },
  { name: 'search_issues', arguments: { query: 'naïve "quoted" \\ text\nwith a newline', limit: 20, filters: { labels: ['bug', 'p1'], closed: false, since: null } } },
  { name: 'list_issues', arguments: {} },
];

describe('codec round trip: parse(render(turn)) recovers the turn', () => {
  for (const codec of CODECS) {
    for (const call of calls) {
      it(`${codec.name}: ${call.name} ${JSON.stringify(call.arguments)}`, () => {
        const text = turnText(codec, { role: 'assistant', content: '', tool_calls: [{ id: 'call_4', ...call }] });
        assert.deepEqual(codec.parse(text), { kind: 'tool_call', ...call });
      });
    }

    it(`${codec.name}: a final answer`, () => {
      const text = turnText(codec, { role: 'assistant', content: 'There are 2 login bugs: #4821 and #5120.' });
      assert.deepEqual(codec.parse(text), { kind: 'final_text', text: 'There are 2 login bugs: #4821 and #5120.' });
    });
  }

  for (const codec of CODECS) {
    for (const count of [2, 3]) {
      it(`${codec.name}: a turn of ${count} calls comes back as one tool_calls action, in order`, () => {
        const turn = calls.slice(0, count);
        const text = turnText(codec, { role: 'assistant', content: '', tool_calls: turn.map((call, index) => ({ id: `call_${index + 4}`, ...call })) });
        assert.deepEqual(codec.parse(text), { kind: 'tool_calls', calls: turn });
      });
    }
  }

  it('hermes: the words before several calls come back as their text', () => {
    const hermes = CODECS.find((codec) => codec.name === 'hermes')!;
    const turn = calls.slice(0, 2);
    const text = turnText(hermes, { role: 'assistant', content: 'Both at once.', tool_calls: turn.map((call, index) => ({ id: `call_${index + 1}`, ...call })) });
    assert.deepEqual(hermes.parse(text), { kind: 'tool_calls', calls: turn, text: 'Both at once.' });
  });

  it('hermes: the words before a call come back as its text', () => {
    const hermes = CODECS.find((codec) => codec.name === 'hermes')!;
    const text = turnText(hermes, { role: 'assistant', content: 'Let me search.', tool_calls: [{ id: 'call_1', name: 'search_issues', arguments: { query: 'login' } }] });
    assert.deepEqual(hermes.parse(text), { kind: 'tool_call', name: 'search_issues', arguments: { query: 'login' }, text: 'Let me search.' });
  });
});
