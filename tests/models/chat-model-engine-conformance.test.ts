// Runs the chat-model conformance suite, unchanged, against the engine
// (src/engine: llama.cpp serving Ollama's and OpenAI's APIs) with the tiny
// qwen2 model scripts/tiny-model.sh trains here: Ollama native, Ollama raw and
// OpenAI-compatible (streamed, and whole) over the same engine. The model's
// answers are its own (greedy, so the same every time); a proxy in front of
// the engine keeps each chat request's body and makes the server fail on cue,
// which a healthy engine never does by itself. One engine serves every run.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before } from 'node:test';
import { tinyModelPath } from '../../src/cli/engine-command.js';
import { startEngine, type EngineServer } from '../../src/engine/engine-server.js';
import { hermesCodec } from '../../src/models/codecs/hermes-codec.js';
import { checkModel } from '../../src/models/model-registry.js';
import { ollamaFailureMessage, openAIFailureMessage, startFailingProxy } from '../fixtures/chat-failures.js';
import { callingTurn } from '../fixtures/calling-turn.js';
import { ANSWER_TIMEOUT_MS, chatModelConformance, type ChatModelStandIn, type Transport } from './chat-model-conformance.js';

const NAME = 'tiny-qwen2:latest';

let engine: EngineServer;
let digest: string;
/** A turn of the committed sample the model answers with a call (tests/fixtures/calling-turn.ts). */
let scenario: ChatModelStandIn['scenario'];
before(async () => {
  const modelPath = tinyModelPath();
  digest = createHash('sha256').update(readFileSync(modelPath)).digest('hex');
  engine = await startEngine({ modelPath, name: NAME, version: 'episode-factory-engine conformance' });
  scenario = await callingTurn(engine.url, NAME);
});
after(async () => {
  await engine?.close();
});

async function standIn(provider: 'ollama' | 'openai', mode: 'native' | 'raw', answers: Transport): Promise<ChatModelStandIn> {
  const proxy = await startFailingProxy(engine.url);
  const endpoint = mode === 'native' ? '/api/chat' : '/api/generate';
  return {
    model: async ({ transport = answers, timeoutMs = ANSWER_TIMEOUT_MS } = {}) => {
      const options = provider === 'ollama' ? { host: proxy.url } : { baseUrl: `${proxy.url}/v1`, retries: 0, stream: transport === 'streamed' };
      return (await checkModel({ provider, model: NAME }, { ...options, timeoutMs })).inMode(mode, hermesCodec);
    },
    transports: provider === 'ollama' ? ['streamed'] : ['streamed', 'whole'],
    codec: hermesCodec,
    scenario,
    spec: `${provider}:${NAME}`,
    pin: digest,
    chatRequests: () => proxy.chatRequests(),
    fail: (failure) => proxy.fail(failure),
    expectedError: (failure) => (provider === 'ollama' ? ollamaFailureMessage(endpoint, failure) : openAIFailureMessage(answers, failure, 'mid-answer')),
    close: () => proxy.close(),
  };
}

chatModelConformance({ label: 'ollama native, against the engine', start: () => standIn('ollama', 'native', 'streamed') });
chatModelConformance({ label: 'ollama raw, against the engine', start: () => standIn('ollama', 'raw', 'streamed') });
chatModelConformance({ label: 'openai, streamed answers, against the engine', start: () => standIn('openai', 'native', 'streamed') });
chatModelConformance({ label: 'openai, whole answers, against the engine', start: () => standIn('openai', 'native', 'whole') });
