// Pins how `<provider>:<model>` is read for --policy, --user and --model: a
// listed provider and a non-blank name on one line make a spec; anything else
// is not one, so the command names the flag and the forms it takes.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatModelSpec, parseModelSpec } from '../../src/models/model-registry.js';

describe('model specs', () => {
  it('reads a listed provider and the model after the first colon, tags and all', () => {
    assert.deepEqual(parseModelSpec('ollama:qwen2.5:1.5b'), { provider: 'ollama', model: 'qwen2.5:1.5b' });
    assert.deepEqual(parseModelSpec('openai:Qwen/Qwen2.5-1.5B-Instruct'), { provider: 'openai', model: 'Qwen/Qwen2.5-1.5B-Instruct' });
    assert.deepEqual(parseModelSpec('openai: padded '), { provider: 'openai', model: 'padded' });
    assert.equal(formatModelSpec({ provider: 'ollama', model: 'qwen2.5:1.5b' }), 'ollama:qwen2.5:1.5b');
  });

  it('is no spec for an unknown provider, a blank name, no colon, or a name over two lines', () => {
    for (const text of ['scripted', 'vllm:qwen', 'ollama:', 'ollama:   ', ':qwen', 'OLLAMA:qwen', 'ollama:foo\n', 'ollama:foo\nbar', 'openai:a\r\nb']) {
      assert.equal(parseModelSpec(text), undefined, JSON.stringify(text));
    }
  });
});
