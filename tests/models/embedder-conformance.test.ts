// Runs the embedder conformance suite, unchanged, against every embedding
// provider the registry knows, each through the stand-in that speaks its wire
// protocol: Ollama (/api/tags, /api/embed, through the official client) and
// OpenAI-compatible servers (/v1/models, /v1/embeddings, answered out of
// index order). The tiny engine in src/engine serves chat alone (no
// /api/embed, no /v1/embeddings), so it is not a provider here.

import { startFakeOllama } from '../fixtures/fake-ollama.js';
import { fakeOllamaDigest, startFakeOpenAI } from '../fixtures/fake-openai.js';
import { embedderFromSpec } from '../../src/models/embedding/embedder-registry.js';
import { CONFORMANCE_TIMEOUT_MS, embedderConformance, type EmbeddingFailure } from './embedder-conformance.js';

const MODEL = 'fake-qwen:1b';

/** Both stand-ins fail the same four ways, each in its own server's terms. */
const FAILURES = {
  'http error': { kind: 'http', status: 500 },
  'dropped connection': { kind: 'disconnect' },
  silence: { kind: 'hang' },
  'not the protocol': { kind: 'garbage' },
} as const satisfies Record<EmbeddingFailure, object>;

const texts = (body: unknown) => (body as { input: string[] }).input;

embedderConformance({
  label: 'ollama, against the fake Ollama',
  start: async () => {
    const server = await startFakeOllama();
    const host = server.url;
    const errors: Record<EmbeddingFailure, { message: string; fix: string }> = {
      'http error': {
        message: `Ollama at ${host} could not embed with "${MODEL}": an internal error occurred`,
        fix: 'use an embedding model (for example `ollama pull nomic-embed-text`, then --embed ollama:nomic-embed-text)',
      },
      'dropped connection': { message: `cannot reach Ollama at ${host} (UND_ERR_SOCKET)`, fix: 'start it with `ollama serve`, or point --ollama-host (or OLLAMA_HOST) at a running Ollama' },
      silence: {
        message: `Ollama at ${host} did not answer /api/embed for "${MODEL}" within 0.5 s`,
        fix: 'check the server (`ollama ps`, its log); a slow one (a CPU) needs a longer --model-timeout',
      },
      'not the protocol': {
        message: `${host} answered /api/embed with something that is not JSON (Unexpected token '<', "<!DOCTYPE "... is not valid JSON)`,
        fix: 'point --ollama-host (or OLLAMA_HOST) at an Ollama server, started with `ollama serve`',
      },
    };
    return {
      embedder: (settings = {}) => embedderFromSpec(`ollama:${MODEL}`, { host, timeoutMs: CONFORMANCE_TIMEOUT_MS, ...settings }),
      name: `ollama:${MODEL}`,
      dimensions: 8,
      // The digest /api/tags lists for the model.
      pin: fakeOllamaDigest(MODEL),
      embeddingRequests: () => server.requestsTo('/api/embed').map((request) => texts(request.body)),
      fail: (failure) => void server.fail('embed', FAILURES[failure]),
      expectedError: (failure) => errors[failure],
      close: () => server.close(),
    };
  },
});

embedderConformance({
  label: 'openai, against the fake vLLM',
  start: async () => {
    const server = await startFakeOpenAI({ flavour: 'vllm' });
    const url = `${server.baseUrl}/embeddings`;
    const errors: Record<EmbeddingFailure, { message: string; fix: string }> = {
      'http error': { message: `${url} answered HTTP 500: an internal error occurred`, fix: 'check the server and the model' },
      'dropped connection': { message: `cannot reach ${url} (UND_ERR_SOCKET)`, fix: 'start the server, or point --base-url (or OPENAI_BASE_URL) at it' },
      silence: { message: `${url} did not answer within 0.5 s`, fix: 'check the server (its log); a slow one needs a longer --model-timeout' },
      'not the protocol': {
        message: `${url} answered with something that is not JSON ("<!DOCTYPE html>\\n<html><head><title>Welcome to nginx!</title>")`,
        fix: 'point --base-url at an OpenAI-compatible API root, e.g. http://127.0.0.1:8000/v1',
      },
    };
    return {
      embedder: (settings = {}) => embedderFromSpec(`openai:${MODEL}`, { baseUrl: server.baseUrl, modelDigest: 'A'.repeat(64), timeoutMs: CONFORMANCE_TIMEOUT_MS, ...settings }),
      name: `openai:${MODEL}`,
      dimensions: 8,
      // A server that lists no digest is pinned by --model-digest, normalised.
      pin: `sha256:${'a'.repeat(64)}`,
      embeddingRequests: () => server.requestsTo('/v1/embeddings').map((request) => texts(request.body)),
      fail: (failure) => void server.fail('embeddings', FAILURES[failure]),
      expectedError: (failure) => errors[failure],
      close: () => server.close(),
    };
  },
});
