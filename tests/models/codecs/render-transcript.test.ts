import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Message } from '../../../src/core/conversation.js';
import { CODECS } from '../../../src/models/codecs/codec-registry.js';
import { renderTranscript } from '../../../src/models/codecs/model-codec.js';
import { PARALLEL, SEARCH_RESULT } from './codec-fixtures.js';

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

describe('transcripts of turns with several calls', () => {
  // What each family's transcript holds between the user's request and the final answer: the one turn of calls, then every result in order.
  const middles: Record<string, string> = {
    hermes:
      '<|im_start|>assistant\nDoing both.\n<tool_call>\n{"name": "search_issues", "arguments": {"query": "login", "limit": 5}}\n</tool_call>\n' +
      '<tool_call>\n{"name": "close_issue", "arguments": {"number": 7}}\n</tool_call><|im_end|>\n' +
      `<|im_start|>user\n<tool_response>\n${SEARCH_RESULT}\n</tool_response>\n<tool_response>\nissue 7 is locked\n</tool_response><|im_end|>\n`,
    llama3:
      '<|start_header_id|>assistant<|end_header_id|>\n\n<|python_tag|>{"name": "search_issues", "parameters": {"query": "login", "limit": 5}}; {"name": "close_issue", "parameters": {"number": 7}}<|eom_id|>' +
      `<|start_header_id|>ipython<|end_header_id|>\n\n${SEARCH_RESULT}<|eot_id|><|start_header_id|>ipython<|end_header_id|>\n\nissue 7 is locked<|eot_id|>`,
    mistral:
      '[TOOL_CALLS] [{"name": "search_issues", "arguments": {"query": "login", "limit": 5}, "id": "call00001"}, {"name": "close_issue", "arguments": {"number": 7}, "id": "call00002"}]</s>' +
      `[TOOL_RESULTS] {"content": ${JSON.stringify(SEARCH_RESULT)}, "call_id": "call00001"}[/TOOL_RESULTS][TOOL_RESULTS] {"content": "issue 7 is locked", "call_id": "call00002"}[/TOOL_RESULTS]`,
  };
  const userEnds: Record<string, string> = { hermes: 'close #7.<|im_end|>\n', llama3: 'close #7.<|eot_id|>', mistral: 'close #7.[/INST]' };
  const answers: Record<string, string> = { hermes: '<|im_start|>assistant\nFound #4821; #7 is locked.<|im_end|>\n', llama3: '<|start_header_id|>assistant<|end_header_id|>\n\nFound #4821; #7 is locked.<|eot_id|>', mistral: ' Found #4821; #7 is locked.</s>' };

  for (const codec of CODECS) {
    it(`${codec.name}: the calls turn and its results sit between the request and the answer, each once`, () => {
      const transcript = renderTranscript(codec, PARALLEL, []);
      assert.equal(codec.render(PARALLEL, []), transcript + codec.generationPrompt);
      const expected = userEnds[codec.name]! + middles[codec.name]! + answers[codec.name]!;
      assert.ok(transcript.endsWith(expected), transcript.slice(-400));
    });
  }
});
