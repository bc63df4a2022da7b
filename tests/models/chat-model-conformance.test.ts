// Runs the chat-model conformance suite, unchanged, against every chat-model
// provider the registry knows, each through the stand-in that speaks its wire
// protocol: Ollama native (/api/chat, through the official client) and raw
// (/api/generate with the prompt the Hermes codec renders) on the fake
// Ollama, and an OpenAI-compatible server (the fake vLLM, /v1/chat/completions)
// asked for streamed answers and for whole ones. The engine with the tiny
// model runs the same suite in chat-model-engine-conformance.test.ts.

import { hermesCodec } from '../../src/models/codecs/hermes-codec.js';
import { checkModel } from '../../src/models/model-registry.js';
import { ISSUES_TOOLS } from '../../src/world/issues/issues-tools.js';
import { fakeOllamaDigest, startFakeOpenAI } from '../fixtures/fake-openai.js';
import { ollamaFailureMessage, openAIFailureMessage } from '../fixtures/chat-failures.js';
import { startFakeOllama } from '../fixtures/fake-ollama.js';
import { ANSWER_TIMEOUT_MS, chatModelConformance, type ChatFailure, type ChatModelStandIn } from './chat-model-conformance.js';

const MODEL = 'fake-parallel:1b';
const REVISION = '0123456789abcdef0123456789abcdef01234567';
const SNAPSHOT = `/root/.cache/huggingface/hub/models--fake--parallel/snapshots/${REVISION}`;

const SCENARIO: ChatModelStandIn['scenario'] = {
  messages: [
    { role: 'system', content: 'You manage an issue tracker.' },
    { role: 'user', content: "Issue #3907 is labelled bug, but it is really a feature request. Replace the bug label with enhancement, and tell me the issue's title so I can double-check." },
  ],
  tools: ISSUES_TOOLS.map((tool) => ({ name: tool.name, description: tool.description, input_schema: tool.inputSchema })),
  expectedTool: 'remove_label',
  expectedCalls: [
    { name: 'remove_label', arguments: { number: 3907, label: 'bug' } },
    { name: 'add_label', arguments: { number: 3907, label: 'enhancement' } },
  ],
};

/** Both stand-ins fail the same four ways, each in its own server's terms. */
const FAILURES = {
  'http error': { kind: 'http', status: 500 },
  'dropped connection': { kind: 'disconnect' },
  silence: { kind: 'hang' },
  'not the protocol': { kind: 'garbage' },
} as const satisfies Record<ChatFailure, object>;

for (const mode of ['native', 'raw'] as const) {
  chatModelConformance({
    label: `ollama ${mode}, against the fake Ollama`,
    start: async () => {
      const server = await startFakeOllama();
      const endpoint = mode === 'native' ? '/api/chat' : '/api/generate';
      return {
        model: async ({ timeoutMs = ANSWER_TIMEOUT_MS } = {}) => (await checkModel({ provider: 'ollama', model: MODEL }, { host: server.url, timeoutMs })).inMode(mode, hermesCodec),
        transports: ['streamed'],
        codec: hermesCodec,
        scenario: SCENARIO,
        spec: `ollama:${MODEL}`,
        pin: fakeOllamaDigest(MODEL),
        chatRequests: () => server.requestsTo(endpoint).map((request) => request.body),
        fail: (failure) => void server.fail(mode === 'native' ? 'chat' : 'generate', FAILURES[failure]),
        expectedError: (failure) => ollamaFailureMessage(endpoint, failure),
        close: () => server.close(),
      };
    },
  });
}

for (const answers of ['streamed', 'whole'] as const) {
  chatModelConformance({
    label: `openai, ${answers} answers, against the fake vLLM`,
    start: async () => {
      const server = await startFakeOpenAI({ flavour: 'vllm', weights: { [MODEL]: SNAPSHOT } });
      return {
        model: async ({ transport = answers, timeoutMs = ANSWER_TIMEOUT_MS } = {}) =>
          checkModel({ provider: 'openai', model: MODEL }, { baseUrl: server.baseUrl, timeoutMs, retries: 0, stream: transport === 'streamed' }),
        transports: ['streamed', 'whole'],
        codec: hermesCodec,
        scenario: SCENARIO,
        spec: `openai:${MODEL}`,
        pin: REVISION,
        chatRequests: () => server.chatBodies(),
        fail: (failure) => void server.fail('chat', FAILURES[failure]),
        // The fake drops a stream after its first chunks, and a whole answer before any byte.
        expectedError: (failure) => openAIFailureMessage(answers, failure, answers === 'streamed' ? 'mid-answer' : 'before any byte'),
        close: () => server.close(),
      };
    },
  });
}
