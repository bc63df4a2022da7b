// The Ollama embedder against a local HTTP server that speaks Ollama's wire
// protocol (GET /api/tags, POST /api/embed), through the real `ollama` client:
// no model weights can run here, but every byte the client sends is checked.

import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { FactoryError } from '../../src/core/errors.js';
import { DEDUP_REPORT_FILE, dedupDataset, type DedupReport, DROPPED_FILE, episodeText } from '../../src/dataset/dedup.js';
import { DEFAULT_OLLAMA_HOST, resolveOllamaHost } from '../../src/models/ollama/ollama-host.js';
import { sameModel } from '../../src/models/model-name.js';
import { cosineSimilarity } from '../../src/models/embedding/embedder.js';
import { exactJaccard, recordShingles } from '../../src/dataset/minhash.js';
import { OllamaEmbedder } from '../../src/models/embedding/ollama-embedder.js';
import type { EpisodeRecord } from '../../src/records/episode-record.js';
import { REPO_ROOT, temporaryDirectory } from '../helpers.js';

const DIGEST = '0a109f422b47e3a30ba2b10eca18548e944e8a23073ee3f3e947efcf3c45e59f';

/** One entry of /api/tags as Ollama 0.x returns it. */
function tag(name: string, digest: string) {
  return {
    name,
    model: name,
    modified_at: '2025-05-23T15:09:41.295741207+02:00',
    size: 274302450,
    digest,
    details: { parent_model: '', format: 'gguf', family: 'nomic-bert', families: ['nomic-bert'], parameter_size: '137M', quantization_level: 'F16' },
  };
}

interface Seen {
  method: string;
  url: string;
  contentType: string | undefined;
  body: string;
}

interface FakeOllama {
  host: string;
  requests: Seen[];
  close(): Promise<void>;
}

/** Answers like Ollama: tags from `models`, embeddings from `vectorFor`, errors as JSON `{error}` with Ollama's status codes. */
async function fakeOllama(options: { models: ReturnType<typeof tag>[]; vectorFor?: (text: string) => number[]; embedError?: { status: number; error: string } }): Promise<FakeOllama> {
  const requests: Seen[] = [];
  const send = (response: ServerResponse, status: number, value: unknown) => {
    response.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
    response.end(JSON.stringify(value));
  };
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      requests.push({ method: request.method!, url: request.url!, contentType: request.headers['content-type'], body });
      if (request.method === 'GET' && request.url === '/api/tags') return send(response, 200, { models: options.models });
      if (request.method === 'POST' && request.url === '/api/embed') {
        if (options.embedError) return send(response, options.embedError.status, { error: options.embedError.error });
        const { model, input } = JSON.parse(body) as { model: string; input: string | string[] };
        if (!options.models.some((entry) => sameModel(model, entry.name))) return send(response, 404, { error: `model "${model}" not found, try pulling it first` });
        const inputs = Array.isArray(input) ? input : [input];
        return send(response, 200, { model, embeddings: inputs.map((text) => options.vectorFor!(text)), total_duration: 14143917, load_duration: 1019500, prompt_eval_count: inputs.length * 8 });
      }
      send(response, 404, { error: 'not found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  let closed = false;
  const close = () =>
    closed
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          closed = true;
          server.closeAllConnections();
          server.close(() => resolve());
        });
  after(close);
  return { host: `http://127.0.0.1:${port}`, requests, close };
}

async function failure(promise: Promise<unknown>): Promise<FactoryError> {
  const error = await promise.then(
    () => assert.fail('expected a failure'),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof FactoryError, `not a FactoryError: ${String(error)}`);
  return error;
}

const unit = (index: number, dimensions = 8) => Array.from({ length: dimensions }, (_, position) => (position === index ? 1 : 0));

describe('cosine similarity', () => {
  it('is 1 for the same direction, 0 for orthogonal, -1 for opposite, 0 for a zero vector', () => {
    assert.equal(cosineSimilarity([1, 2, 3], [2, 4, 6]), 1);
    assert.equal(cosineSimilarity([1, 0], [0, 5]), 0);
    assert.equal(cosineSimilarity([1, 1], [-1, -1]), -1);
    assert.equal(cosineSimilarity([0, 0], [1, 1]), 0);
    assert.ok(Math.abs(cosineSimilarity([1, 0], [1, 1]) - Math.SQRT1_2) < 1e-12);
    assert.throws(() => cosineSimilarity([1], [1, 2]), RangeError);
  });
});

describe('Ollama host and model names', () => {
  it('takes the explicit host, else OLLAMA_HOST, else the default', () => {
    assert.equal(resolveOllamaHost('http://a:1', { OLLAMA_HOST: 'http://b:2' }), 'http://a:1');
    assert.equal(resolveOllamaHost(undefined, { OLLAMA_HOST: 'http://b:2' }), 'http://b:2');
    assert.equal(resolveOllamaHost(undefined, { OLLAMA_HOST: '  ' }), DEFAULT_OLLAMA_HOST);
    assert.equal(resolveOllamaHost(undefined, {}), 'http://127.0.0.1:11434');
  });

  it('treats a name without a tag as :latest', () => {
    assert.ok(sameModel('nomic-embed-text', 'nomic-embed-text:latest'));
    assert.ok(sameModel('nomic-embed-text:latest', 'nomic-embed-text'));
    assert.ok(!sameModel('nomic-embed-text', 'nomic-embed-text:v1.5'));
    assert.ok(sameModel('registry.local:5000/team/embed', 'registry.local:5000/team/embed:latest'));
  });
});

describe('OllamaEmbedder against a server speaking the Ollama protocol', () => {
  it('checks the model with /api/tags, then posts {model, input} to /api/embed, and records the digest', async () => {
    const server = await fakeOllama({ models: [tag('all-minilm:latest', 'f'.repeat(64)), tag('nomic-embed-text:latest', DIGEST)], vectorFor: (text) => [text.length, 1] });
    const embedder = new OllamaEmbedder({ model: 'nomic-embed-text', host: server.host });
    assert.equal(embedder.name, 'ollama:nomic-embed-text');
    assert.equal(embedder.digest, undefined);
    assert.deepEqual(await embedder.embed(['a', 'héllo']), [
      [1, 1],
      [5, 1],
    ]);
    assert.equal(embedder.digest, DIGEST);
    assert.deepEqual(
      server.requests.map((request) => [request.method, request.url]),
      [
        ['GET', '/api/tags'],
        ['POST', '/api/embed'],
      ],
    );
    assert.equal(server.requests[1]!.body, '{"model":"nomic-embed-text","input":["a","héllo"]}');
    assert.equal(server.requests[1]!.contentType, 'application/json');
    await embedder.embed(['b']);
    assert.equal(server.requests.filter((request) => request.url === '/api/tags').length, 1, 'the model is checked once');
  });

  it('sends large inputs in batches and returns the vectors in order', async () => {
    const server = await fakeOllama({ models: [tag('nomic-embed-text:latest', DIGEST)], vectorFor: (text) => [Number(text.slice(1)), 0, 1] });
    const embedder = new OllamaEmbedder({ model: 'nomic-embed-text:latest', host: server.host, batchSize: 2 });
    const texts = ['t0', 't1', 't2', 't3', 't4'];
    assert.deepEqual((await embedder.embed(texts)).map((vector) => vector[0]), [0, 1, 2, 3, 4]);
    assert.deepEqual(
      server.requests.filter((request) => request.url === '/api/embed').map((request) => JSON.parse(request.body) as unknown),
      [
        { model: 'nomic-embed-text:latest', input: ['t0', 't1'] },
        { model: 'nomic-embed-text:latest', input: ['t2', 't3'] },
        { model: 'nomic-embed-text:latest', input: ['t4'] },
      ],
    );
  });

  it('reads OLLAMA_HOST itself, since the client does not', async () => {
    const server = await fakeOllama({ models: [tag('nomic-embed-text:latest', DIGEST)], vectorFor: () => [1] });
    const previous = process.env.OLLAMA_HOST;
    process.env.OLLAMA_HOST = server.host;
    try {
      const embedder = new OllamaEmbedder({ model: 'nomic-embed-text' });
      assert.equal(embedder.host, server.host);
      await embedder.embed(['x']);
      assert.equal(server.requests.length, 2);
    } finally {
      if (previous === undefined) delete process.env.OLLAMA_HOST;
      else process.env.OLLAMA_HOST = previous;
    }
  });

  it('names a missing model and says to pull it, before embedding anything', async () => {
    const server = await fakeOllama({ models: [tag('all-minilm:latest', 'f'.repeat(64)), tag('nomic-embed-text:v1.5', DIGEST)], vectorFor: () => [1] });
    const error = await failure(new OllamaEmbedder({ model: 'nomic-embed-text', host: server.host }).embed(['x']));
    assert.equal(error.code, 'usage');
    assert.equal(error.message, `Ollama at ${server.host} has no model "nomic-embed-text" (it has: all-minilm:latest, nomic-embed-text:v1.5)`);
    assert.equal(error.fix, 'ollama pull nomic-embed-text');
    assert.deepEqual(server.requests.map((request) => request.url), ['/api/tags']);
  });

  it('says to start Ollama when nothing answers at the host', async () => {
    const server = await fakeOllama({ models: [] });
    await server.close();
    const error = await failure(new OllamaEmbedder({ model: 'nomic-embed-text', host: server.host }).embed(['x']));
    assert.match(error.message, new RegExp(`^cannot reach Ollama at ${server.host} \\(ECONNREFUSED\\)$`));
    assert.match(error.fix!, /ollama serve/);
  });

  it('says to pull the model when /api/embed no longer finds it, and to use an embedding model when it cannot embed', async () => {
    const gone = await fakeOllama({ models: [tag('nomic-embed-text:latest', DIGEST)], embedError: { status: 404, error: 'model "nomic-embed-text" not found, try pulling it first' } });
    const missing = await failure(new OllamaEmbedder({ model: 'nomic-embed-text', host: gone.host }).embed(['x']));
    assert.match(missing.message, /could not embed with "nomic-embed-text": model "nomic-embed-text" not found/);
    assert.equal(missing.fix, 'ollama pull nomic-embed-text');

    const chat = await fakeOllama({ models: [tag('llama3.2:latest', DIGEST)], embedError: { status: 500, error: 'this model does not support embeddings' } });
    const unsupported = await failure(new OllamaEmbedder({ model: 'llama3.2', host: chat.host }).embed(['x']));
    assert.match(unsupported.message, /does not support embeddings/);
    assert.match(unsupported.fix!, /embedding model/);
  });

  it('refuses an answer with the wrong number of vectors or ragged vectors', async () => {
    const short = await fakeOllama({ models: [tag('nomic-embed-text:latest', DIGEST)], vectorFor: (text) => (text === 'b' ? [1] : [1, 2]) });
    const error = await failure(new OllamaEmbedder({ model: 'nomic-embed-text', host: short.host }).embed(['a', 'b']));
    assert.match(error.message, /vectors of different or zero length/);
  });
});

describe('semantic dedup through Ollama', () => {
  const work = temporaryDirectory('ef-semantic-');
  const sample = readFileSync(join(REPO_ROOT, 'datasets', 'tool-world-v1', 'episodes.jsonl'), 'utf8').split('\n').slice(0, -1);
  const sampleRecords = sample.map((line) => JSON.parse(line) as EpisodeRecord);
  // The first pair of the sample that near dedup at 0.9 must catch, found the slow way, and the first record of four other tasks.
  const sets = sampleRecords.map((record) => recordShingles(record));
  const pair = sets.flatMap((left, first) => sets.slice(first + 1).map((right, offset) => [first, first + 1 + offset, exactJaccard(left, right)] as const)).find(([, , similarity]) => similarity >= 0.9)!;
  assert.ok(pair, 'the sample has a near-duplicate pair at 0.9');
  const nearTask = sampleRecords[pair[0]]!.task.id;
  const otherTasks = [...new Set(sampleRecords.map((record) => record.task.id))].filter((task) => task !== nearTask).slice(0, 4);
  const chosen = [pair[0], pair[1], ...otherTasks.map((task) => sampleRecords.findIndex((record) => record.task.id === task))];
  assert.equal(chosen.length, 6);
  const lines = chosen.map((index) => sample[index]!);
  const ids = chosen.map((index) => sampleRecords[index]!.record_id);
  // ids[2] is kept; ids[3] is embedded close to it (cosine 0.995); ids[4] somewhat close to ids[0] (0.894); ids[5] apart; and a clone of ids[2] comes last.
  const clone = JSON.parse(lines[2]!) as EpisodeRecord;
  clone.record_id = `${clone.record_id}.again`;
  clone.provenance.lineage.seed = 100;
  const dir = join(work, 'source');
  mkdirSync(dir);
  writeFileSync(join(dir, 'episodes.jsonl'), [...lines, JSON.stringify(clone)].join('\n') + '\n');
  const records = lines.map((line) => JSON.parse(line) as EpisodeRecord);
  const texts = records.map(episodeText);
  const vectors = [unit(0), unit(1), unit(2), [0, 0, 1, 0.1, 0, 0, 0, 0], [1, 0, 0, 0, 0.5, 0, 0, 0], unit(5)];
  const vectorFor = (text: string) => {
    const index = texts.indexOf(text);
    assert.ok(index >= 0, `unexpected input text: ${text.slice(0, 120)}`);
    return vectors[index]!;
  };

  it('renders what it embeds from the conversation, without tool result contents', () => {
    const record = sampleRecords.find((candidate) => candidate.task.id === 'close-named-issue' && candidate.recovery.error_turns === 0)!;
    const text = episodeText(record);
    const toolMessage = record.messages.find((message) => message.role === 'tool')!;
    assert.ok(text.startsWith('system: You are an assistant'));
    assert.ok(text.includes(`user: ${record.messages[1]!.content}`));
    assert.match(text, /\[call close_issue \{"number":\d+,"reason":"completed"\}\]/);
    assert.ok(text.includes('\ntool: ok\n'));
    assert.ok(toolMessage.content.length > 20 && !text.includes(toolMessage.content), 'no tool result content');
  });

  it('drops a record whose embedding is near a kept one, embedding each distinct trajectory once', async () => {
    const server = await fakeOllama({ models: [tag('nomic-embed-text:latest', DIGEST)], vectorFor });
    const outDir = join(work, 'out');
    const summary = await dedupDataset({ dir, outDir, embedder: new OllamaEmbedder({ model: 'nomic-embed-text', host: server.host }) });

    const embedRequests = server.requests.filter((request) => request.url === '/api/embed');
    assert.equal(embedRequests.length, 1);
    assert.equal(embedRequests[0]!.body, JSON.stringify({ model: 'nomic-embed-text', input: texts }), 'the clone is not embedded again');
    assert.deepEqual(server.requests[0]!.url, '/api/tags');

    assert.deepEqual(summary.by_reason, { exact: 1, near: 1, semantic: 1 });
    assert.equal(summary.kept, 4);
    assert.equal(summary.cosine_threshold, 0.95);
    assert.equal(summary.embed_model, 'ollama:nomic-embed-text');
    assert.equal(summary.embed_model_digest, DIGEST);

    const dropped = readFileSync(join(outDir, DROPPED_FILE), 'utf8').split('\n').slice(0, -1).map((line) => JSON.parse(line) as { record_id: string; reason: string; duplicate_of: string; similarity: number });
    assert.deepEqual(
      dropped.map(({ record_id, reason, duplicate_of }) => [record_id, reason, duplicate_of]),
      [
        [ids[1], 'near', ids[0]],
        [ids[3], 'semantic', ids[2]],
        [clone.record_id, 'exact', ids[2]],
      ],
    );
    assert.equal(dropped[1]!.similarity, cosineSimilarity(vectors[3]!, vectors[2]!));
    const report = JSON.parse(readFileSync(join(outDir, DEDUP_REPORT_FILE), 'utf8')) as DedupReport;
    assert.deepEqual(report.semantic, { embedder: 'ollama:nomic-embed-text', digest: DIGEST, cosine_threshold: 0.95 });
  });

  it('drops more with a lower cosine threshold, and nothing semantic with a higher one', async () => {
    const server = await fakeOllama({ models: [tag('nomic-embed-text:latest', DIGEST)], vectorFor });
    const embedder = () => new OllamaEmbedder({ model: 'nomic-embed-text', host: server.host });
    const lower = await dedupDataset({ dir, outDir: join(work, 'lower'), near: false, embedder: embedder(), cosine: 0.85 });
    // ids[1] is orthogonal to ids[0] in this embedding, so only near dedup would catch it.
    assert.deepEqual(lower.by_reason, { exact: 1, near: 0, semantic: 2 });
    const higher = await dedupDataset({ dir, outDir: join(work, 'higher'), near: false, embedder: embedder(), cosine: 0.999 });
    assert.deepEqual(higher.by_reason, { exact: 1, near: 0, semantic: 0 });
  });

  it('fails before writing anything when the model is missing', async () => {
    const server = await fakeOllama({ models: [tag('all-minilm:latest', DIGEST)], vectorFor });
    const outDir = join(work, 'missing-model');
    const error = await failure(dedupDataset({ dir, outDir, embedder: new OllamaEmbedder({ model: 'nomic-embed-text', host: server.host }) }));
    assert.equal(error.fix, 'ollama pull nomic-embed-text');
    assert.throws(() => readFileSync(join(outDir, 'episodes.jsonl')), /ENOENT/);
  });
});
