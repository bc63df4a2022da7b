// The one translation between the record's messages and each provider's wire,
// and the one lenient reading of a call's arguments every wire reader uses
// (the providers, the engine, env serve).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Message } from '../../src/core/conversation.js';
import { parseArguments, toOllamaMessage, toOpenAIMessages } from '../../src/models/message-translation.js';

describe('parseArguments', () => {
  it('reads JSON text, keeps objects, and makes absent or blank arguments no arguments', () => {
    assert.deepEqual(parseArguments('{"number": 3, "label": "bug"}'), { number: 3, label: 'bug' });
    assert.deepEqual(parseArguments({ number: 3 }), { number: 3 });
    for (const none of [undefined, null, '', '  \n']) assert.deepEqual(parseArguments(none), {}, JSON.stringify(none));
  });

  it('keeps text that is not JSON as the model wrote it, for the runner to answer as invalid arguments', () => {
    assert.equal(parseArguments('{"number": 3,'), '{"number": 3,');
    assert.equal(parseArguments('close issue 3'), 'close issue 3');
    assert.deepEqual(parseArguments('[1, 2]'), [1, 2], 'JSON that is not an object is still what the model sent');
  });
});

describe('messages on the wire', () => {
  const conversation: Message[] = [
    { role: 'system', content: 'You manage an issue tracker.' },
    { role: 'user', content: 'Close #3.' },
    { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', name: 'close_issue', arguments: { number: 3 } }, { id: 'call_2', name: 'get_issue', arguments: '{"number": ' }] },
    { role: 'tool', tool_call_id: 'call_1', name: 'close_issue', content: '{"ok": true}', tool_result: { ok: true } },
    { role: 'tool', tool_call_id: null, name: null, content: 'Your call was not valid JSON.', tool_result: { ok: false } },
  ];

  it('gives OpenAI JSON text for arguments, ids that match, and a malformed call answered as a user turn', () => {
    assert.deepEqual(toOpenAIMessages(conversation).slice(2), [
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'close_issue', arguments: '{"number":3}' } },
          { id: 'call_2', type: 'function', function: { name: 'get_issue', arguments: '{"number": ' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '{"ok": true}' },
      { role: 'user', content: 'Your call was not valid JSON.' },
    ]);
  });

  it("gives Ollama arguments as objects (text that is none becomes no arguments) and the tool's name", () => {
    assert.deepEqual(toOllamaMessage(conversation[2]!), {
      role: 'assistant',
      content: '',
      tool_calls: [{ function: { name: 'close_issue', arguments: { number: 3 } } }, { function: { name: 'get_issue', arguments: {} } }],
    });
    assert.deepEqual(toOllamaMessage(conversation[3]!), { role: 'tool', content: '{"ok": true}', tool_name: 'close_issue' });
  });
});
