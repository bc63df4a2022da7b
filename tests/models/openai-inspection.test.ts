// Holds the start-up probe of an OpenAI-compatible server to what each server
// tells about itself (vLLM's root, max_model_len and /version; llama.cpp's
// /props model path, build and chat template; SGLang's model path; Ollama's
// digest), over real HTTP against the fake OpenAI server, and every way the
// check fails to one line with its fix: nothing answering, a host that never
// answers, something that is not the protocol, a refused key, a model that
// is not served. The extras never fail the check, and the key is in no
// message.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { FactoryError } from '../../src/core/errors.js';
import { STARTUP_CHECK_TIMEOUT_MS } from '../../src/models/chat-model.js';
import { inspectOpenAIModel } from '../../src/models/openai/openai-inspection.js';
import { FAKE_CHAT_TEMPLATE, fakeOllamaDigest, startFakeOpenAI, type FakeOpenAI, type FakeOpenAIOptions } from '../fixtures/fake-openai.js';
import { startSilentHost } from '../fixtures/fake-ollama.js';

const servers: FakeOpenAI[] = [];
after(() => Promise.all(servers.map((server) => server.close())));

async function serve(options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const server = await startFakeOpenAI(options);
  servers.push(server);
  return server;
}

async function refusal(promise: Promise<unknown>): Promise<FactoryError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof FactoryError, `rejected with ${String(error)}`);
    assert.equal(error.code, 'model_unavailable');
    assert.equal(error.exitStatus, 2);
    return error;
  }
  assert.fail('expected the check to fail');
}

describe('inspectOpenAIModel: what the server says it loaded', () => {
  it('reads vLLM: owned_by, root, max_model_len and /version', async () => {
    const vllm = await serve({ flavour: 'vllm', version: '0.11.0', maxModelLen: 16384, weights: { 'fake-qwen:1b': 'Qwen/Qwen2.5-1.5B-Instruct' } });
    const info = await inspectOpenAIModel({ baseUrl: vllm.baseUrl }, 'fake-qwen:1b');
    assert.deepEqual(
      { ...info, served: info.served.length },
      {
        baseUrl: vllm.baseUrl,
        model: 'fake-qwen:1b',
        server: 'vllm',
        weights: 'Qwen/Qwen2.5-1.5B-Instruct',
        max_model_len: 16384,
        owned_by: 'vllm',
        server_version: '0.11.0',
        chat_template_sha256: null,
        digest: null,
        served: vllm.models().length,
      },
    );
    // vLLM names itself: nothing meant for another server is asked.
    assert.deepEqual(vllm.requests.map((request) => request.path).sort(), ['/v1/models', '/version']);
  });

  it('reads llama.cpp: /props model_path, build_info, n_ctx and the chat template\'s sha256', async () => {
    const llama = await serve({ flavour: 'llama.cpp', version: 'b6710-74b8fc17', contextSize: 8192 });
    const info = await inspectOpenAIModel({ baseUrl: llama.baseUrl }, 'fake-qwen:1b');
    assert.equal(info.server, 'llama.cpp');
    assert.equal(info.owned_by, 'llamacpp');
    assert.equal(info.weights, '/models/fake-qwen-1b-Q4_K_M.gguf');
    assert.equal(info.server_version, 'b6710-74b8fc17');
    assert.equal(info.max_model_len, 8192);
    assert.equal(info.chat_template_sha256, createHash('sha256').update(FAKE_CHAT_TEMPLATE).digest('hex'));
    assert.equal(info.digest, null);
    const other = await serve({ flavour: 'llama.cpp', chatTemplate: '{{ messages }}' });
    assert.notEqual((await inspectOpenAIModel({ baseUrl: other.baseUrl }, 'fake-qwen:1b')).chat_template_sha256, info.chat_template_sha256);
  });

  it('falls back to n_ctx_train when /props does not answer', async () => {
    const llama = await serve({ flavour: 'llama.cpp' });
    llama.fail('props', { kind: 'http', status: 500 });
    const info = await inspectOpenAIModel({ baseUrl: llama.baseUrl }, 'fake-qwen:1b');
    assert.equal(info.server, 'llama.cpp');
    assert.equal(info.max_model_len, 32768);
    assert.equal(info.weights, null);
    assert.equal(info.chat_template_sha256, null);
  });

  it('reads SGLang: /get_model_info model_path', async () => {
    const sglang = await serve({ flavour: 'sglang', models: [{ name: 'qwen-sg', family: 'qwen2', behaviour: 'agent' }], weights: { 'qwen-sg': '/data/Qwen2.5-7B-Instruct' } });
    const info = await inspectOpenAIModel({ baseUrl: sglang.baseUrl }, 'qwen-sg');
    assert.equal(info.server, 'sglang');
    assert.equal(info.weights, '/data/Qwen2.5-7B-Instruct');
    assert.equal(info.max_model_len, 32768);
  });

  it('reads Ollama\'s /v1: the digest from /api/tags and the version from /api/version, a name without a tag meaning :latest', async () => {
    const ollama = await serve({ flavour: 'ollama', version: '0.12.3', models: [{ name: 'fake-qwen:1b', family: 'qwen2', behaviour: 'agent' }, { name: 'qwen3:latest', family: 'qwen2', behaviour: 'agent' }] });
    const info = await inspectOpenAIModel({ baseUrl: ollama.baseUrl }, 'fake-qwen:1b');
    assert.equal(info.server, 'ollama');
    assert.equal(info.server_version, '0.12.3');
    assert.equal(info.digest, fakeOllamaDigest('fake-qwen:1b'));
    assert.equal(info.weights, null);
    const untagged = await inspectOpenAIModel({ baseUrl: ollama.baseUrl }, 'qwen3');
    assert.equal(untagged.model, 'qwen3:latest');
    assert.equal(untagged.digest, fakeOllamaDigest('qwen3:latest'));
  });

  it('never fails on the extras: an extra that hangs, errs or answers garbage leaves its fields null', async () => {
    const ollama = await serve({ flavour: 'ollama' });
    ollama.fail('tags', { kind: 'hang' });
    ollama.fail('api-version', { kind: 'garbage' });
    const info = await inspectOpenAIModel({ baseUrl: ollama.baseUrl }, 'fake-qwen:1b', { timeoutMs: 300 });
    assert.equal(info.server, 'unknown');
    assert.equal(info.digest, null);
    assert.equal(info.server_version, null);
    const vllm = await serve({ flavour: 'vllm' });
    vllm.fail('version', { kind: 'http', status: 404, body: '{"detail":"Not Found"}' });
    const plain = await inspectOpenAIModel({ baseUrl: vllm.baseUrl }, 'fake-qwen:1b');
    assert.equal(plain.server, 'vllm');
    assert.equal(plain.server_version, null);
    assert.equal(plain.weights, '/models/fake-qwen-1b');
  });

  it('waits STARTUP_CHECK_TIMEOUT_MS by default', () => {
    assert.equal(STARTUP_CHECK_TIMEOUT_MS, 10_000);
  });
});

describe('inspectOpenAIModel: when the check fails', () => {
  it('names a model that is not served, the ids that are, and the flag to pass', async () => {
    const vllm = await serve({ models: [{ name: 'Qwen/Qwen2.5-7B-Instruct', family: 'qwen2', behaviour: 'agent' }, { name: 'meta-llama/Llama-3.1-8B-Instruct', family: 'llama', behaviour: 'agent' }] });
    const error = await refusal(inspectOpenAIModel({ baseUrl: vllm.baseUrl }, 'qwen2.5'));
    assert.equal(error.message, `model "qwen2.5" is not served at ${vllm.baseUrl} (it serves: Qwen/Qwen2.5-7B-Instruct, meta-llama/Llama-3.1-8B-Instruct)`);
    assert.equal(error.fix, 'pass --policy openai:<one of them>');
    const single = await serve({ models: [{ name: 'Qwen/Qwen2.5-7B-Instruct', family: 'qwen2', behaviour: 'agent' }] });
    const one = await refusal(inspectOpenAIModel({ baseUrl: single.baseUrl }, 'qwen2.5', { flag: '--user' }));
    assert.equal(one.fix, 'pass --user openai:Qwen/Qwen2.5-7B-Instruct');
  });

  it('says nothing is answering when the connection is refused, with the command that starts a server', async () => {
    const gone = await startFakeOpenAI();
    const { baseUrl } = gone;
    await gone.close();
    const error = await refusal(inspectOpenAIModel({ baseUrl }, 'fake-qwen:1b'));
    assert.equal(error.message, `nothing is answering at ${baseUrl} (ECONNREFUSED)`);
    assert.equal(error.fix, 'start the server (e.g. `vllm serve <model>` or `llama-server -m <file> --port 8080`) or point --base-url (or OPENAI_BASE_URL) at it');
  });

  it('says a host that never answers is not an OpenAI-compatible server, within the silence limit', async () => {
    const silent = await startSilentHost();
    try {
      const started = performance.now();
      const error = await refusal(inspectOpenAIModel({ baseUrl: `${silent.url}/v1` }, 'fake-qwen:1b', { timeoutMs: 300 }));
      assert.ok(performance.now() - started < 3_000);
      assert.equal(error.message, `${silent.url}/v1 did not answer GET /models within 0.3 s: it is not an OpenAI-compatible server`);
      assert.match(error.fix!, /--base-url/);
    } finally {
      await silent.close();
    }
  });

  it('says an answer that is not JSON, or JSON without a data list, is not an OpenAI-compatible server', async () => {
    const server = await serve();
    server.fail('models', { kind: 'garbage' }, { times: 1 });
    const page = await refusal(inspectOpenAIModel({ baseUrl: server.baseUrl }, 'fake-qwen:1b'));
    assert.match(page.message, /answered GET \/models with something that is not JSON \("<!DOCTYPE html>.*\): it is not an OpenAI-compatible server$/);
    server.fail('models', { kind: 'garbage', body: '{"models":[]}', contentType: 'application/json' }, { times: 1 });
    const noData = await refusal(inspectOpenAIModel({ baseUrl: server.baseUrl }, 'fake-qwen:1b'));
    assert.match(noData.message, /answered GET \/models without a `data` list .*: it is not an OpenAI-compatible server$/);
    // The origin without /v1: FastAPI's 404.
    const origin = await refusal(inspectOpenAIModel({ baseUrl: server.url }, 'fake-qwen:1b'));
    assert.equal(origin.message, `${server.url} has no GET /models (HTTP 404): it is not an OpenAI-compatible base URL`);
    assert.match(origin.fix!, /\/v1 at the end/);
  });

  it('names --api-key-env when the server wants a key, or refuses the one given, and never shows the key', async () => {
    const guarded = await serve({ apiKey: 'sk-right-key', echoKeyOn401: true });
    const none = await refusal(inspectOpenAIModel({ baseUrl: guarded.baseUrl }, 'fake-qwen:1b'));
    assert.match(none.message, /refused GET \/models: HTTP 401: Incorrect API key provided: \(none\)/);
    assert.equal(none.fix, 'the server wants a key: pass --api-key-env NAME, naming an environment variable that holds it');
    const wrong = await refusal(inspectOpenAIModel({ baseUrl: guarded.baseUrl, apiKey: 'sk-wrong-key-5150' }, 'fake-qwen:1b'));
    assert.equal(guarded.requests.at(-1)!.headers.authorization, 'Bearer sk-wrong-key-5150');
    assert.ok(!wrong.message.includes('sk-wrong-key-5150'), wrong.message);
    assert.ok(!String(wrong.fix).includes('sk-wrong-key-5150'));
    assert.match(wrong.fix!, /--api-key-env NAME/);
    const right = await inspectOpenAIModel({ baseUrl: guarded.baseUrl, apiKey: 'sk-right-key' }, 'fake-qwen:1b');
    assert.equal(right.server, 'vllm');
    assert.equal(right.server_version, '0.11.0');
  });
});
