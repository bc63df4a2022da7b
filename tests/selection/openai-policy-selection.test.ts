// A lane played by a model served through an OpenAI-compatible API, end to
// end: the server here is the project's fake (tests/fixtures/fake-openai.ts),
// a local HTTP server that speaks the chat-completions wire protocol as vLLM,
// llama.cpp's server and Ollama's /v1 do (SSE chunks with split tool-call
// arguments, usage, error bodies, stalls). No vLLM or llama.cpp can run on
// these machines (no weights can be fetched), so the fake's scripted agents
// stand in for models; the client, the runner, replay and audit are real.

import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { cpSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { auditDataset } from '../../src/dataset-replay/audit-dataset.js';
import { generateDataset } from '../../src/generation/generate-dataset.js';
import { parsePolicySpec, preparePolicy, type ModelOptions } from '../../src/selection/policy-selection.js';
import { replayDataset } from '../../src/dataset-replay/replay-dataset.js';
import { runGate } from '../../src/gate/tool-calling-gate.js';
import { loadLane } from '../../src/lanes/lane-loader.js';
import { ModelWriter } from '../../src/policy/model-writer.js';
import { OpenAIChatModel } from '../../src/models/openai/openai-chat-model.js';
import { digestFor } from '../../src/models/openai/openai-provider.js';
import { checkModel } from '../../src/models/model-registry.js';
import type { EpisodeRecord } from '../../src/records/episode-record.js';
import { asker, FAKE_MODELS } from '../fixtures/fake-agents.js';
import { FAKE_CHAT_TEMPLATE, fakeOllamaDigest, startFakeOpenAI, type FakeOpenAI } from '../fixtures/fake-openai.js';
import { REPO_ROOT, runCliAsync, temporaryDirectory } from '../helpers.js';

const REVISION = '0123456789abcdef0123456789abcdef01234567';
const SNAPSHOT = `/root/.cache/huggingface/hub/models--fake--qwen/snapshots/${REVISION}`;

const WRITER_LINES = ['1. Could you list the open bugs about {{topic}}?', '- Which open bugs mention {{topic}}? Give me their numbers.'];

let vllm: FakeOpenAI;
before(async () => {
  delete process.env.SOURCE_DATE_EPOCH;
  vllm = await startFakeOpenAI({
    flavour: 'vllm',
    models: [
      ...FAKE_MODELS,
      { name: 'fake-asker:1b', family: 'qwen2', behaviour: asker, nativeCalls: true },
      { name: 'fake-writer:1b', family: 'qwen2', behaviour: () => ({ kind: 'text', text: WRITER_LINES.join('\n') }) },
    ],
    weights: Object.fromEntries([...FAKE_MODELS.map((model) => model.name), 'fake-asker:1b', 'fake-writer:1b'].map((name) => [name, SNAPSHOT])),
  });
});
after(async () => {
  await vllm.close();
});

const lane = () => loadLane('tool-world-v1', REPO_ROOT);
const readRecords = (dir: string) => readFileSync(join(dir, 'episodes.jsonl'), 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as EpisodeRecord);
const policyActor = (record: EpisodeRecord) => record.provenance.actors.find((actor) => actor.role === 'policy') as Record<string, any>;

async function generateWith(model: string, options: ModelOptions & { seeds?: [number, number]; concurrency?: number; task?: string } = {}) {
  const theLane = lane();
  const policy = await preparePolicy(theLane, parsePolicySpec(`openai:${model}`), { baseUrl: vllm.baseUrl, ...options });
  const out = temporaryDirectory();
  const [from, to] = options.seeds ?? [0, 0];
  const summary = await generateDataset({ lane: theLane, outDir: out, seeds: { from, to }, policy, concurrency: options.concurrency ?? 1, formats: ['jsonl'], ...(options.task ? { tasks: [options.task] } : {}) });
  return { out, summary, records: readRecords(out) };
}

/** Every file under a directory, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe('generate --policy openai:<model>', () => {
  it('plays a lane with native tool calls and writes verified records that pin the served weights, the same bytes every run', async () => {
    const first = await generateWith('fake-qwen:1b', { seeds: [0, 1], concurrency: 4 });
    assert.deepEqual([first.summary.episodes, first.summary.written, first.summary.rejected, first.summary.completed], [10, 10, 0, 10]);
    for (const record of first.records) {
      const actor = policyActor(record);
      assert.equal(actor.kind, 'model');
      assert.equal(actor.provider, 'openai');
      assert.equal(actor.name, 'fake-qwen:1b');
      assert.equal(actor.weights, SNAPSHOT);
      assert.equal(actor.digest, null, 'the revision in the weights pins them');
      assert.equal(actor.version, REVISION.slice(0, 12));
      assert.equal(actor.server, 'vllm');
      assert.equal(actor.server_version, '0.11.0');
      assert.equal(actor.max_model_len, 32768);
      assert.equal(actor.codec, 'hermes');
      assert.equal(actor.stream, true);
      assert.deepEqual(Object.keys(actor.options), ['seed', 'temperature', 'max_tokens']);
      assert.equal(record.provenance.lineage.variant, 'openai:fake-qwen:1b');
      assert.match(record.record_id, /\.s[01]\.openai-fake-qwen-1b$/);
      assert.match(record.provenance.lineage.generate_command, / --policy openai:fake-qwen:1b --out regenerated\//);
    }
    const port = new URL(vllm.url).port;
    const text = readFileSync(join(first.out, 'episodes.jsonl'), 'utf8');
    assert.ok(!text.includes(vllm.url) && !text.includes(`:${port}`), 'where the server ran is not part of a record');
    const replay = await replayDataset(first.out);
    assert.deepEqual([replay.verified, replay.failed], [10, 0], 'replay needs no model: it re-issues the recorded actions');
    assert.deepEqual((await auditDataset(first.out, { sample: 10 })).findings, []);
    const second = await generateWith('fake-qwen:1b', { seeds: [0, 1], concurrency: 1 });
    assert.equal(readFileSync(join(second.out, 'episodes.jsonl'), 'utf8'), text, 'same lane, seeds and model: byte-identical records');
  });

  it('sends the tools, the seed, temperature and output-token cap it records, and answers every call by the id it was given', async () => {
    const start = vllm.chatBodies().length;
    const { records } = await generateWith('fake-qwen:1b', { task: 'close-named-issue' });
    const bodies = vllm.chatBodies().slice(start) as any[];
    assert.ok(bodies.length >= 2);
    const options = policyActor(records[0]!).options;
    for (const body of bodies) {
      assert.equal(body.model, 'fake-qwen:1b');
      assert.equal(body.stream, true);
      assert.deepEqual(body.stream_options, { include_usage: true });
      assert.deepEqual([body.seed, body.temperature, body.max_tokens], [options.seed, 0.2, 512]);
      assert.equal(body.tools.length, 9);
      assert.equal(body.tool_choice, 'auto');
      assert.equal(body.tools[0].type, 'function');
      assert.ok(body.tools[0].function.parameters.type === 'object');
    }
    const last = bodies.at(-1)!.messages as any[];
    const call = last.find((message) => message.role === 'assistant' && message.tool_calls)!;
    assert.equal(call.tool_calls[0].id, 'call_1');
    assert.equal(typeof call.tool_calls[0].function.arguments, 'string');
    const answer = last.find((message) => message.role === 'tool')!;
    assert.equal(answer.tool_call_id, 'call_1');
  });

  it('reads whole answers (--no-stream) into the same conversation as streamed ones', async () => {
    const streamed = await generateWith('fake-qwen:1b', { seeds: [2, 2] });
    const start = vllm.chatBodies().length;
    const whole = await generateWith('fake-qwen:1b', { seeds: [2, 2], stream: false });
    assert.ok((vllm.chatBodies().slice(start) as any[]).every((body) => body.stream === false && body.stream_options === undefined));
    assert.deepEqual(whole.records.map((record) => record.messages), streamed.records.map((record) => record.messages));
    assert.equal(policyActor(whole.records[0]!).stream, false);
  });

  it('keeps several calls of one turn as one turn, and reads calls a server returned as text with the family codec', async () => {
    const parallel = await generateWith('fake-parallel:1b', { seeds: [0, 0] });
    assert.equal(parallel.summary.rejected, 0);
    assert.ok(parallel.records.some((record) => record.messages.some((message) => message.role === 'assistant' && (message.tool_calls?.length ?? 0) > 1)), 'a turn with several calls');
    const start = vllm.chatBodies().length;
    const text = await generateWith('fake-hermes-text:1b', { seeds: [0, 0] });
    assert.equal(text.summary.rejected, 0);
    assert.ok(text.records.some((record) => record.messages.some((message) => message.role === 'assistant' && (message.tool_calls?.length ?? 0) > 0)), 'the codec found the calls in the text');
    assert.ok(vllm.chatBodies().length > start);
  });

  it('retries a 429 and a 503 with backoff, and keeps an episode the server stalled on out of the records as an infra error', async () => {
    const start = vllm.chatBodies().length;
    vllm.fail('chat', { kind: 'http', status: 429, retryAfter: 0, message: 'rate limited' }, { times: 1, model: 'fake-qwen:1b' });
    vllm.fail('chat', { kind: 'http', status: 503, message: 'overloaded' }, { times: 1, after: 1, model: 'fake-qwen:1b' });
    const retried = await generateWith('fake-qwen:1b', { task: 'close-named-issue', retries: 2 });
    assert.deepEqual([retried.summary.written, retried.summary.infra_errors], [1, 0]);
    const turns = retried.records[0]!.messages.filter((message) => message.role === 'assistant').length;
    assert.equal(vllm.chatBodies().length - start, turns + 2, 'one request a turn, and the two refused ones asked again (replay asks no model)');
    vllm.fail('chat', { kind: 'stall', afterChunks: 1 }, { model: 'fake-qwen:1b' });
    try {
      const stalled = await generateWith('fake-qwen:1b', { task: 'close-named-issue', timeoutMs: 300 });
      assert.deepEqual([stalled.summary.written, stalled.summary.infra_errors], [0, 1]);
      assert.match(stalled.summary.infra_failures[0]!.reason, /openai POST \/chat\/completions.*stopped sending.*--model-timeout/);
    } finally {
      vllm.clearFailures();
    }
    vllm.fail('chat', { kind: 'http', status: 400, message: 'tools are not supported without --enable-auto-tool-choice' }, { model: 'fake-qwen:1b' });
    try {
      const refused = await generateWith('fake-qwen:1b', { task: 'close-named-issue', retries: 3 });
      assert.equal(refused.summary.infra_errors, 1);
      assert.match(refused.summary.infra_failures[0]!.reason, /HTTP 400.*enable-auto-tool-choice/);
    } finally {
      vllm.clearFailures();
    }
  });
});

describe('what pins an openai: model', () => {
  it('refuses a llama.cpp model whose path names no revision until --model-digest pins it, then records the digest and the template hash', async () => {
    const server = await startFakeOpenAI({ flavour: 'llama.cpp' });
    try {
      await assert.rejects(preparePolicy(lane(), parsePolicySpec('openai:fake-qwen:1b'), { baseUrl: server.baseUrl }), (error: any) => {
        assert.equal(error.code, 'model_unavailable');
        assert.match(error.message, /nothing pins the weights of fake-qwen:1b.*weights "\/models\/fake-qwen-1b-Q4_K_M\.gguf", which names no revision/);
        assert.match(error.fix, /--model-digest/);
        return true;
      });
      const digest = createHash('sha256').update('the weights file').digest('hex');
      const theLane = lane();
      const policy = await preparePolicy(theLane, parsePolicySpec('openai:fake-qwen:1b'), { baseUrl: server.baseUrl, modelDigests: [digest] });
      const out = temporaryDirectory();
      const summary = await generateDataset({ lane: theLane, outDir: out, seeds: { from: 0, to: 0 }, tasks: ['find-open-bugs'], policy, formats: ['jsonl'] });
      assert.equal(summary.written, 1);
      const record = readRecords(out)[0]!;
      const actor = policyActor(record);
      assert.equal(actor.digest, `sha256:${digest}`);
      assert.match(record.provenance.lineage.generate_command, new RegExp(` --policy openai:fake-qwen:1b --model-digest fake-qwen:1b=sha256:${digest} --out `), 'the command that makes it again pins it again');
      assert.equal(actor.version, digest.slice(0, 12));
      assert.equal(actor.server, 'llama.cpp');
      assert.equal(actor.weights, '/models/fake-qwen-1b-Q4_K_M.gguf');
      assert.equal(actor.chat_template_sha256, createHash('sha256').update(FAKE_CHAT_TEMPLATE).digest('hex'));
      assert.equal(actor.max_model_len, 4096);
      assert.deepEqual((await auditDataset(out, { sample: 1 })).findings, []);
      await assert.rejects(preparePolicy(lane(), parsePolicySpec('openai:fake-qwen:1b'), { baseUrl: server.baseUrl, modelDigests: ['latest'] }), /--model-digest "latest" is not a digest/);
    } finally {
      await server.close();
    }
  });

  it("takes Ollama's digest from /api/tags when the server is Ollama's /v1, and refuses a --model-digest that contradicts it", async () => {
    const server = await startFakeOpenAI({ flavour: 'ollama' });
    try {
      const checked = await checkModel({ provider: 'openai', model: 'fake-qwen:1b' }, { baseUrl: server.baseUrl });
      assert.ok(checked instanceof OpenAIChatModel);
      assert.equal(checked.digest, fakeOllamaDigest('fake-qwen:1b'));
      assert.equal(checked.pin, fakeOllamaDigest('fake-qwen:1b'));
      await assert.rejects(checkModel({ provider: 'openai', model: 'fake-qwen:1b' }, { baseUrl: server.baseUrl, modelDigests: ['f'.repeat(64)] }), /is not the digest .* the server at .* reports/);
    } finally {
      await server.close();
    }
  });

  it('refuses a --model-digest revision that contradicts the revision the server loaded', async () => {
    await assert.rejects(checkModel({ provider: 'openai', model: 'fake-qwen:1b' }, { baseUrl: vllm.baseUrl, modelDigests: ['f'.repeat(40)] }), /--model-digest f{40} is not the revision 0123456789abcdef0123456789abcdef01234567 the server at .* loaded for fake-qwen:1b/);
    const agreeing = await checkModel({ provider: 'openai', model: 'fake-qwen:1b' }, { baseUrl: vllm.baseUrl, modelDigests: [REVISION] });
    assert.ok(agreeing instanceof OpenAIChatModel);
    assert.equal(agreeing.digest, REVISION);
  });

  it('gives each served model the --model-digest that names it, and a bare one to the one model named', () => {
    const entries = [`Qwen/Qwen2.5-7B=${'a'.repeat(64)}`, 'b'.repeat(40)];
    assert.equal(digestFor('Qwen/Qwen2.5-7B', entries), 'a'.repeat(64));
    assert.equal(digestFor('other', entries), 'b'.repeat(40));
    assert.equal(digestFor('other', [`Qwen/Qwen2.5-7B=${'a'.repeat(64)}`]), undefined);
  });

  it('the audit refuses a record whose model is pinned by nothing', async () => {
    const { out, records } = await generateWith('fake-qwen:1b', { task: 'find-open-bugs' });
    const copy = temporaryDirectory();
    cpSync(out, copy, { recursive: true });
    const record = records[0]!;
    const actor = policyActor(record);
    actor.weights = 'Qwen/Qwen2.5-1.5B-Instruct';
    writeFileSync(join(copy, 'episodes.jsonl'), JSON.stringify(record) + '\n');
    const audit = await auditDataset(copy, { sample: 0 });
    assert.ok(
      audit.findings.some((finding) => finding.check === 'provenance' && /fake-qwen:1b is a model with neither a digest nor pinned weights .*--model-digest/.test(finding.reason)),
      JSON.stringify(audit.findings),
    );
  });
});

describe('openai: through the CLI', () => {
  it('sends the key from the variable --api-key-env names and never writes it: not in records, traces, rejections, the manifest, stdout or stderr', async () => {
    const key = `sk-test-${randomBytes(12).toString('hex')}`;
    const server = await startFakeOpenAI({ flavour: 'vllm', apiKey: key, echoKeyOn401: true, weights: { 'fake-qwen:1b': SNAPSHOT } });
    process.env.EF_TEST_OPENAI_KEY = key;
    try {
      const missing = await runCliAsync(REPO_ROOT, 'generate', 'tool-world-v1', '--policy', 'openai:fake-qwen:1b', '--base-url', server.baseUrl, '--out', join(temporaryDirectory(), 'never'));
      assert.equal(missing.status, 2, missing.stderr);
      assert.match(missing.stderr, /401.*--api-key-env/s);
      // One episode runs clean; in the other the server refuses the key mid-run and echoes it back, as careless servers do.
      server.fail('chat', { kind: 'http', status: 401, message: 'invalid key', echoKey: true }, { after: 4 });
      const out = join(temporaryDirectory(), 'out');
      const run = await runCliAsync(REPO_ROOT, 'generate', 'tool-world-v1', '--policy', 'openai:fake-qwen:1b', '--base-url', server.baseUrl, '--api-key-env', 'EF_TEST_OPENAI_KEY', '--task', 'find-open-bugs', 'close-named-issue', '--seeds', '0..1', '--out', out);
      assert.equal(run.status, 1, run.stderr);
      assert.match(run.stderr, /with an API key/);
      assert.match(run.stderr, /INFRA .*HTTP 401/);
      const authorised = server.requestsTo('/v1/chat/completions').filter((request) => request.headers.authorization === `Bearer ${key}`);
      assert.ok(authorised.length > 0, 'the key was sent');
      const files = filesUnder(out);
      assert.ok(files.some((file) => file.endsWith('rejected.jsonl')) && files.some((file) => file.includes('traces')));
      for (const file of files) assert.ok(!readFileSync(file, 'latin1').includes(key), `${file} holds the key`);
      assert.ok(!run.stdout.includes(key) && !run.stderr.includes(key) && !missing.stderr.includes(key));
    } finally {
      delete process.env.EF_TEST_OPENAI_KEY;
      await server.close();
    }
  });

  it('says which flag is wrong, before anything runs', async () => {
    const cwd = temporaryDirectory();
    const cases: [string[], RegExp][] = [
      [['--base-url', vllm.baseUrl], /--base-url applies to a model served through an OpenAI-compatible API, and none plays here/],
      [['--policy', 'openai:fake-qwen:1b', '--base-url', vllm.baseUrl, '--mode', 'raw'], /--mode raw renders the prompt for Ollama's \/api\/generate/],
      [['--policy', 'openai:fake-qwen:1b', '--base-url', vllm.baseUrl, '--api-key-env', 'EF_NO_SUCH_VARIABLE'], /--api-key-env EF_NO_SUCH_VARIABLE: the variable is not set/],
      [['--policy', 'openai:fake-qwen:1b', '--base-url', vllm.baseUrl, '--api-key-env', 'sk-abc123'], /--api-key-env sk-… \(9 characters, not shown\) is not the name of an environment variable/],
      [['--policy', 'openai:fake-qwen:1b', '--base-url', vllm.baseUrl, '--api-key-env', 'abcKey123'], /--api-key-env abc… \(9 characters, not shown\): the variable is not set/],
      [['--policy', 'openai:no-such-model', '--base-url', vllm.baseUrl], /no-such-model/],
      [['--policy', 'openai:fake-qwen:1b', '--base-url', 'http://user:secret@127.0.0.1:1/v1'], /carries credentials in the URL/],
      [['--policy', 'openai:fake-qwen:1b', '--base-url', 'http://127.0.0.1:9/v1'], /fix:.*--base-url/],
      [['--policy', 'ollama:fake-qwen:1b', '--retries', '2'], /--retries applies to openai:<model>/],
      [['--policy', 'openai:fake-asker:1b', '--user', 'openai:fake-user:1b', '--base-url', vllm.baseUrl, '--model-digest', 'f'.repeat(64)], /--model-digest: one digest without a model, and 2 served models play here — fix: say whose it is: --model-digest <model>=<digest>/],
      [['--policy', 'openai:fake-qwen:1b', '--base-url', vllm.baseUrl, '--model-digest', `fake-llama:1b=${'f'.repeat(64)}`], /--model-digest fake-llama:1b=…: no openai:fake-llama:1b plays here/],
      [['--policy', 'remote:my-agent'], /--policy remote:my-agent is an agent that played through env serve, and only it can play again — fix: reproduce its records with `episode-factory replay <dir>`/],
    ];
    for (const [flags, message] of cases) {
      const run = await runCliAsync(cwd, 'generate', 'tool-world-v1', '--out', 'never', ...flags);
      assert.equal(run.status, 2, `${flags.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, message, flags.join(' '));
      // A key passed where its variable's name belongs is never printed back.
      for (const secret of ['sk-abc123', 'abcKey123']) if (flags.includes(secret)) assert.ok(!run.stderr.includes(secret), run.stderr);
    }
    assert.deepEqual(readdirSync(cwd), [], 'nothing was written');
  });

  it('plays the user too (--user openai:<model>), and both actors replay without either model', async () => {
    const out = join(temporaryDirectory(), 'out');
    const run = await runCliAsync(REPO_ROOT, 'generate', 'issues-dialogue-v1', '--task', 'close-the-fixed-issue', '--seeds', '0..1', '--policy', 'openai:fake-asker:1b', '--user', 'openai:fake-user:1b', '--base-url', vllm.baseUrl, '--out', out, '--format', 'jsonl');
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stderr, /generate: the user is fake-user:1b \(0123456789ab, weights .*\) at http:\/\/127\.0\.0\.1:\d+\/v1, vllm 0\.11\.0/);
    const written = readRecords(out);
    assert.equal(written.length, 2);
    for (const record of written) {
      const user = record.provenance.actors.find((actor) => actor.role === 'user')!;
      assert.deepEqual([user.kind, user.provider, user.name], ['model', 'openai', 'fake-user:1b']);
      assert.equal(record.result.task_completed, true);
      assert.match(record.provenance.lineage.generate_command, / --policy openai:fake-asker:1b --user openai:fake-user:1b --out regenerated\//);
    }
    const unserved = await runCliAsync(REPO_ROOT, 'generate', 'issues-dialogue-v1', '--user', 'openai:no-such-user', '--base-url', vllm.baseUrl, '--out', join(temporaryDirectory(), 'never'));
    assert.equal(unserved.status, 2);
    assert.match(unserved.stderr, /no-such-user.*fix: pass --user openai:/);
    const userBodies = vllm.chatBodies().filter((body: any) => body.model === 'fake-user:1b') as any[];
    assert.ok(userBodies.length > 0 && userBodies.every((body) => body.tools === undefined), 'the user is asked without tools');
    const replay = await runCliAsync(REPO_ROOT, 'replay', out);
    assert.equal(replay.status, 0, replay.stderr);
  });

  it('gates a served model, and embeds through /v1/embeddings for semantic dedup', async () => {
    const gate = await runGate({ lane: lane(), policy: await preparePolicy(lane(), parsePolicySpec('openai:fake-qwen:1b'), { baseUrl: vllm.baseUrl }), label: 'openai:fake-qwen:1b', turns: 5 });
    assert.equal(gate.pass, true, JSON.stringify(gate));
    const out = join(temporaryDirectory(), 'dedup');
    const dedup = await runCliAsync(REPO_ROOT, 'dedup', join(REPO_ROOT, 'datasets', 'tool-world-v1'), '--out', out, '--no-near', '--embed', 'openai:fake-qwen:1b', '--base-url', vllm.baseUrl, '--json');
    assert.equal(dedup.status, 0, dedup.stderr);
    const summary = JSON.parse(dedup.stdout);
    assert.equal(summary.embed_model, 'openai:fake-qwen:1b');
    assert.ok(summary.kept > 0);
    assert.ok(vllm.requestsTo('/v1/embeddings').length > 0);
    const wrong = await runCliAsync(REPO_ROOT, 'dedup', join(REPO_ROOT, 'datasets', 'tool-world-v1'), '--out', join(temporaryDirectory(), 'x'), '--embed', 'openai:nope', '--base-url', vllm.baseUrl);
    assert.equal(wrong.status, 2);
    assert.match(wrong.stderr, /serves no model "nope"/);
  });

  it('rewords requests with a served writer, pinned in its actor', async () => {
    const checked = await checkModel({ provider: 'openai', model: 'fake-writer:1b' }, { baseUrl: vllm.baseUrl });
    assert.ok(checked instanceof OpenAIChatModel);
    const writer = new ModelWriter(checked, { temperature: 0.8, maxTokens: 1024, seed: 7 });
    assert.deepEqual(await writer.reword(['Find the open bugs about {{topic}}.'], 2), ['Could you list the open bugs about {{topic}}?', 'Which open bugs mention {{topic}}? Give me their numbers.']);
    assert.deepEqual([writer.actor.role, writer.actor.provider, writer.actor.version], ['writer', 'openai', REVISION.slice(0, 12)]);
    const body = vllm.chatBodies().at(-1) as any;
    assert.deepEqual([body.seed, body.temperature, body.max_tokens], [7, 0.8, 1024]);
  });
});
