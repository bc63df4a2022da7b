import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Message } from '../../../src/core/conversation.js';
import { CODECS } from '../../../src/policy/codecs/codec-registry.js';
import { renderTranscript } from '../../../src/policy/codecs/model-codec.js';

const conversation: Message[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Close #7.' },
  { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', name: 'close_issue', arguments: { number: 7 } }] },
  { role: 'tool', tool_call_id: 'call_1', name: 'close_issue', content: '{"ok":true}', tool_result: { ok: true } },
  { role: 'assistant', content: 'Closed #7.' },
];

describe('transcripts for training text', () => {
  for (const codec of CODECS) {
    it(`${codec.name}: the prompt is the transcript plus the generation prompt, and the transcript ends with the final answer's turn`, () => {
      const transcript = renderTranscript(codec, conversation, []);
      assert.equal(codec.render(conversation, []), transcript + codec.generationPrompt);
      const ends: Record<string, string> = { hermes: 'Closed #7.<|im_end|>\n', llama3: 'Closed #7.<|eot_id|>', mistral: ' Closed #7.</s>' };
      assert.ok(transcript.endsWith(ends[codec.name]!), transcript.slice(-40));
    });
  }
});
