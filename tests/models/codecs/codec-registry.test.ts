import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CODEC_NAMES, CODECS, codecByName, codecForFamily } from '../../../src/models/codecs/codec-registry.js';
import { hermesCodec } from '../../../src/models/codecs/hermes-codec.js';
import { llama3Codec } from '../../../src/models/codecs/llama3-codec.js';
import { mistralCodec } from '../../../src/models/codecs/mistral-codec.js';

describe('codec registry', () => {
  it('lists every codec once, by name', () => {
    assert.deepEqual(CODEC_NAMES, ['hermes', 'llama3', 'mistral']);
    assert.deepEqual(CODECS, [hermesCodec, llama3Codec, mistralCodec]);
    assert.equal(codecByName('hermes'), hermesCodec);
    assert.equal(codecByName('llama3'), llama3Codec);
    assert.equal(codecByName('mistral'), mistralCodec);
    assert.equal(codecByName('chatml'), undefined);
  });

  it('maps the families Ollama reports to their codec', () => {
    const expected: [string, typeof hermesCodec][] = [
      ['qwen2', hermesCodec],
      ['qwen2.5', hermesCodec],
      ['qwen3', hermesCodec],
      ['qwen', hermesCodec],
      ['llama', llama3Codec],
      ['llama3.2', llama3Codec],
      ['mistral', mistralCodec],
      ['mixtral', mistralCodec],
    ];
    for (const [family, codec] of expected) assert.equal(codecForFamily(family), codec, family);
  });

  it('ignores case and matches architecture variants by their family prefix', () => {
    assert.equal(codecForFamily('Qwen2'), hermesCodec);
    assert.equal(codecForFamily('qwen2moe'), hermesCodec);
    assert.equal(codecForFamily('qwen3moe'), hermesCodec);
    assert.equal(codecForFamily('LLAMA'), llama3Codec);
    assert.equal(codecForFamily('llama4'), llama3Codec);
  });

  it('knows no codec for other families, or for none', () => {
    for (const family of ['gemma3', 'phi3', 'granite', 'll', '', undefined, null]) assert.equal(codecForFamily(family), undefined, String(family));
  });

  it('gives every codec its stop sequences', () => {
    assert.deepEqual(hermesCodec.stop, ['<|im_end|>']);
    assert.deepEqual(llama3Codec.stop, ['<|eot_id|>', '<|eom_id|>']);
    assert.deepEqual(mistralCodec.stop, ['</s>']);
  });
});
