// The embedder registry: `--embed <provider>:<model>` to the provider's
// embedder, and the usage errors (exit 2) for a spec naming no provider, an
// option given to the other provider, or one given with no --embed at all,
// word for word as the dedup command has always printed them.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FactoryError } from '../../src/core/errors.js';
import { embedderFromSpec, refuseOptionsWithoutEmbedder } from '../../src/models/embedding/embedder-registry.js';
import { OllamaEmbedder } from '../../src/models/embedding/ollama-embedder.js';
import { OpenAIEmbedder } from '../../src/models/embedding/openai-embedder.js';

function usageError(action: () => unknown): { message: string; fix: string | undefined } {
  try {
    action();
  } catch (error) {
    assert.ok(error instanceof FactoryError, `not a FactoryError: ${String(error)}`);
    assert.equal(error.code, 'usage');
    return { message: error.message, fix: error.fix };
  }
  assert.fail('expected a usage error');
}

describe('embedder registry', () => {
  it('makes the named provider\'s embedder for the model after the first colon, trimmed', () => {
    const ollama = embedderFromSpec('ollama: nomic-embed-text:v1.5 ', { host: 'http://127.0.0.1:1' });
    assert.ok(ollama instanceof OllamaEmbedder);
    assert.equal(ollama.name, 'ollama:nomic-embed-text:v1.5');
    assert.equal(ollama.host, 'http://127.0.0.1:1');
    const openai = embedderFromSpec('openai:BAAI/bge-small-en-v1.5', { baseUrl: 'http://127.0.0.1:8000/v1/', modelDigest: 'F'.repeat(40) });
    assert.ok(openai instanceof OpenAIEmbedder);
    assert.equal(openai.name, 'openai:BAAI/bge-small-en-v1.5');
    assert.equal(openai.digest, 'f'.repeat(40));
  });

  it('refuses a spec that names no provider it knows, or no model, listing the ones it does', () => {
    for (const spec of ['cohere:embed-v4', 'ollama', 'ollama:', 'openai:  ']) {
      assert.deepEqual(usageError(() => embedderFromSpec(spec)), {
        message: `--embed ${spec} is not a provider:model pair this tool knows`,
        fix: 'write --embed ollama:<model> (e.g. ollama:nomic-embed-text) or --embed openai:<model> with --base-url',
      });
    }
  });

  it("refuses another provider's option, naming the provider it belongs to", () => {
    assert.deepEqual(usageError(() => embedderFromSpec('ollama:m', { baseUrl: 'http://127.0.0.1:8000/v1', modelDigest: 'x' })), {
      message: '--base-url applies to --embed openai:<model>',
      fix: 'drop --base-url, or embed with openai:<model>',
    });
    assert.deepEqual(usageError(() => embedderFromSpec('ollama:m', { apiKeyEnv: 'KEY' })), { message: '--api-key-env applies to --embed openai:<model>', fix: 'drop --api-key-env, or embed with openai:<model>' });
    assert.deepEqual(usageError(() => embedderFromSpec('ollama:m', { modelDigest: 'x' })), { message: '--model-digest applies to --embed openai:<model>', fix: 'drop --model-digest, or embed with openai:<model>' });
    assert.deepEqual(usageError(() => embedderFromSpec('openai:m', { host: 'http://127.0.0.1:1', modelDigest: 'x' })), {
      message: '--ollama-host applies to --embed ollama:<model>',
      fix: 'drop --ollama-host (use --base-url)',
    });
  });

  it("checks a provider's own options before any request", () => {
    assert.deepEqual(usageError(() => embedderFromSpec('openai:m', { modelDigest: 'latest' })), {
      message: '--model-digest "latest" is not a digest',
      fix: 'pass sha256:<64 hex> of the weights file, or a 40-hex Hugging Face revision',
    });
    assert.match(usageError(() => embedderFromSpec('openai:m', { baseUrl: 'ftp://example.org/v1' })).message, /^--base-url "ftp:\/\/example\.org\/v1" is not http or https$/);
  });

  it('refuses an embedding option given without --embed, the first in flag order', () => {
    assert.doesNotThrow(() => refuseOptionsWithoutEmbedder({}));
    assert.deepEqual(usageError(() => refuseOptionsWithoutEmbedder({ host: 'http://127.0.0.1:1', timeoutMs: '5' })), {
      message: '--ollama-host was given without --embed',
      fix: 'add --embed ollama:<model>, or drop --ollama-host',
    });
    assert.deepEqual(usageError(() => refuseOptionsWithoutEmbedder({ modelDigest: 'x', timeoutMs: '5' })), {
      message: '--model-digest was given without --embed',
      fix: 'add --embed openai:<model>, or drop --model-digest',
    });
    assert.deepEqual(usageError(() => refuseOptionsWithoutEmbedder({ timeoutMs: 'not a number' })), {
      message: '--model-timeout was given without --embed',
      fix: 'add --embed ollama:<model> or --embed openai:<model>, or drop --model-timeout',
    });
  });
});
