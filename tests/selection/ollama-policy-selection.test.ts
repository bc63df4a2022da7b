// A lane played by a local model through Ollama, end to end: Ollama here is a
// fake that speaks the real wire protocol (no model weights can be fetched on
// these machines), driven by the real `ollama` client.

import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Ollama } from 'ollama';
import { auditDataset } from '../../src/dataset-replay/audit-dataset.js';
import { generateDataset } from '../../src/generation/generate-dataset.js';
import { mergeShards } from '../../src/shards/merge-shards.js';
import { parsePolicySpec, preparePolicy } from '../../src/selection/policy-selection.js';
import { replayDataset } from '../../src/dataset-replay/replay-dataset.js';
import { compareGates, runGate } from '../../src/gate/tool-calling-gate.js';
import { loadLane } from '../../src/lanes/lane-loader.js';
import { codecByName } from '../../src/models/codecs/codec-registry.js';
import { inspectModel } from '../../src/models/ollama/ollama-inspection.js';
import type { EpisodeRecord } from '../../src/records/episode-record.js';
import { startFakeOllama, type FakeOllama } from '../fixtures/fake-ollama.js';
import { REPO_ROOT, runCliAsync, temporaryDirectory } from '../helpers.js';

let fake: FakeOllama;
before(async () => {
  delete process.env.SOURCE_DATE_EPOCH;
  fake = await startFakeOllama();
});
after(async () => {
  await fake.close();
});

const lane = () => loadLane('tool-world-v1', REPO_ROOT);
const records = (dir: string) => readFileSync(join(dir, 'episodes.jsonl'), 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as EpisodeRecord);
const policyActor = (record: EpisodeRecord) => record.provenance.actors.find((actor) => actor.role === 'policy') as Record<string, any>;

async function generateWith(model: string, options: { mode?: string; seeds?: [number, number]; concurrency?: number; laneOverride?: ReturnType<typeof lane> } = {}) {
  const theLane = options.laneOverride ?? lane();
  const policy = await preparePolicy(theLane, parsePolicySpec(`ollama:${model}`), { host: fake.url, ...(options.mode ? { mode: options.mode } : {}) });
  const out = temporaryDirectory();
  const [from, to] = options.seeds ?? [0, 0];
  const summary = await generateDataset({ lane: theLane, outDir: out, seeds: { from, to }, policy, concurrency: options.concurrency ?? 1, formats: ['jsonl'] });
  return { out, summary, records: records(out) };
}

describe('generate --policy ollama:<model>', () => {
  it('runs a lane with native tool calling and writes verified records that name the model digest', async () => {
    const { out, summary, records: written } = await generateWith('fake-qwen:1b', { seeds: [0, 1] });
    assert.deepEqual([summary.episodes, summary.written, summary.rejected, summary.completed], [10, 10, 0, 10]);
    const digest = (await new Ollama({ host: fake.url }).list()).models.find((model) => model.name === 'fake-qwen:1b')!.digest;
    for (const record of written) {
      const actor = policyActor(record);
      assert.equal(actor.kind, 'model');
      assert.equal(actor.digest, digest);
      assert.equal(actor.codec, 'hermes');
      assert.equal(actor.mode, 'native');
      assert.equal(actor.ollama_version, '0.12.3');
      assert.equal(record.provenance.lineage.variant, 'ollama:fake-qwen:1b');
      assert.match(record.record_id, /\.s[01]\.ollama-fake-qwen-1b$/);
      assert.match(record.provenance.lineage.generate_command, / --policy ollama:fake-qwen:1b --out regenerated\//);
    }
    const replay = await replayDataset(out);
    assert.deepEqual([replay.verified, replay.failed], [10, 0], 'replay needs no model: it re-issues the recorded actions');
    const audit = await auditDataset(out, { sample: 10 });
    assert.deepEqual(audit.findings, []);
  });

  it('sends the seed, temperature and output-token cap from the lane and the episode, and records them', async () => {
    const before = fake.requestsTo('/api/chat').length;
    const { records: written } = await generateWith('fake-qwen:1b');
    const bodies = fake.requestsTo('/api/chat').slice(before).map((request) => request.body as any);
    assert.ok(bodies.length >= 5);
    for (const body of bodies) {
      assert.equal(body.stream, true);
      assert.equal(body.options.temperature, 0.2);
      assert.equal(body.options.num_predict, 512);
      assert.ok(Number.isInteger(body.options.seed));
      assert.equal(body.tools.length, 9);
      assert.equal(body.tools[0].type, 'function');
    }
    const seeds = new Set(written.map((record) => policyActor(record).options.seed));
    assert.equal(seeds.size, written.length, 'each episode has its own sampling seed');
    const first = written[0]!;
    const firstSeed = policyActor(first).options.seed;
    assert.ok(bodies.some((body) => body.options.seed === firstSeed));
  });

  it('parses calls a model wrote as text when the server found none (the textual fallback)', async () => {
    const { summary, records: written } = await generateWith('fake-hermes-text:1b');
    assert.equal(summary.completed, 5);
    const call = written[0]!.messages.find((message) => message.role === 'assistant' && message.tool_calls)!;
    assert.ok(call);
  });

  for (const model of ['fake-qwen:1b', 'fake-llama:1b', 'fake-mistral:1b']) {
    it(`runs ${model} in raw mode: the prompt rendered by its family codec, the reply parsed by it`, async () => {
      const before = fake.requestsTo('/api/generate').length;
      const { summary, records: written } = await generateWith(model, { mode: 'raw' });
      assert.equal(summary.completed, 5, JSON.stringify(written.map((record) => record.result.predicates)));
      const actor = policyActor(written[0]!);
      const codec = codecByName(actor.codec)!;
      assert.equal(actor.mode, 'raw');
      const bodies = fake.requestsTo('/api/generate').slice(before).map((request) => request.body as any);
      assert.ok(bodies.every((body) => body.raw === true && body.options.stop.join('|') === codec.stop.join('|')));
      assert.ok(bodies[0].prompt.startsWith(codec.name === 'llama3' ? '<|begin_of_text|>' : codec.name === 'mistral' ? '<s>' : '<|im_start|>system'));
    });
  }

  it('records a malformed call and a wrongly typed one, and the model repairing both', async () => {
    const { summary, records: written } = await generateWith('fake-sloppy:1b');
    assert.equal(summary.completed, 5);
    const record = written[0]!;
    const kinds = record.messages.filter((message) => message.role === 'tool' && !message.tool_result.ok).map((message) => (message.role === 'tool' ? message.tool_result.kind : ''));
    assert.deepEqual(kinds, ['malformed_tool_call', 'invalid_arguments']);
    assert.ok(record.messages.some((message) => message.role === 'assistant' && message.malformed_tool_call));
    assert.equal(record.recovery.recovered, true);
  });

  it('does not take a false claim for done: the record says which claim no call supports', async () => {
    const { records: written } = await generateWith('fake-liar:1b');
    const close = written.find((record) => record.task.id === 'close-named-issue')!;
    assert.equal(close.result.task_completed, false);
    assert.equal(close.result.evidence.unsupported, 1);
    assert.equal(close.result.evidence.claims[0]!.tool, 'close_issue');
    assert.ok(written.every((record) => !record.result.task_completed));
  });

  it('stops a model that stalls at the wall-time limit, and the record still replays', async () => {
    const document = JSON.parse(readFileSync(join(REPO_ROOT, 'lanes', 'tool-world-v1.json'), 'utf8'));
    document.name = 'slow-lane';
    document.limits.wall_time_ms = 400;
    const path = join(temporaryDirectory(), 'slow-lane.json');
    writeFileSync(path, JSON.stringify(document));
    const { out, records: written } = await generateWith('fake-staller:1b', { laneOverride: loadLane(path) });
    assert.ok(written.every((record) => record.result.outcome === 'wall_time_limit'), JSON.stringify(written.map((record) => record.result.outcome)));
    assert.deepEqual((await replayDataset(out, { lane: path })).failed, 0);
  });

  it('keeps a server error apart from the records (stage infra), with the server\'s own message', async () => {
    const { out, summary, records: written } = await generateWith('fake-broken:1b');
    assert.deepEqual(written, [], 'a crashed runner says nothing about the model: no training record');
    assert.deepEqual([summary.written, summary.rejected, summary.infra_errors], [0, 0, 5]);
    assert.equal(summary.infra_failures[0]!.reason, 'ollama /api/chat failed: HTTP 500: llama runner process has terminated: exit status 2');
    const rows = readFileSync(join(out, 'rejected.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    assert.deepEqual([...new Set(rows.map((row) => row.stage))], ['infra']);
  });

  it('keeps a failed server apart in raw mode too (/api/generate)', async () => {
    const lift = fake.fail('generate', { kind: 'truncated', afterFrames: 2 }, { model: 'fake-llama:1b' });
    try {
      const { summary, records: written } = await generateWith('fake-llama:1b', { mode: 'raw' });
      assert.deepEqual([written.length, summary.infra_errors], [0, 5]);
      assert.match(summary.infra_failures[0]!.reason, /^ollama \/api\/generate: the stream was cut off in the middle of line 3/);
    } finally {
      lift();
    }
  });

  it('counts infra errors through --resume and merge', async () => {
    const theLane = lane();
    const policy = await preparePolicy(theLane, parsePolicySpec('ollama:fake-broken:1b'), { host: fake.url });
    const root = temporaryDirectory();
    // Interrupted after the first episode, then resumed: the sealed infra error is still counted.
    const stop = new AbortController();
    const common = { lane: theLane, seeds: { from: 0, to: 1 }, policy, formats: ['jsonl' as const] };
    const first = await generateDataset({ ...common, outDir: join(root, 'resumed'), signal: stop.signal, onEpisode: () => stop.abort() });
    assert.deepEqual([first.interrupted, first.infra_errors], [true, 1]);
    const resumed = await generateDataset({ ...common, outDir: join(root, 'resumed'), resume: true });
    assert.deepEqual([resumed.interrupted, resumed.resumed, resumed.infra_errors, resumed.rejected], [false, 1, 10, 0]);
    // Two shards merged: their counts are summed.
    const shards = [0, 1].map((index) => join(root, `shard-${index}`));
    for (const [index, out] of shards.entries()) await generateDataset({ ...common, outDir: out, shard: { index, count: 2 } });
    const merged = await mergeShards({ sources: shards, outDir: join(root, 'merged') });
    assert.deepEqual([merged.written, merged.rejected, merged.infra_errors], [0, 0, 10]);
    assert.equal(JSON.parse(readFileSync(join(root, 'merged', 'manifest.json'), 'utf8')).counts.infra_errors, 10);
    // The server answered the same way every time, so the rows are the same bytes however the run was cut up.
    assert.equal(readFileSync(join(root, 'merged', 'rejected.jsonl'), 'utf8'), readFileSync(join(root, 'resumed', 'rejected.jsonl'), 'utf8'));
  });

  it('gives the same bytes whatever the concurrency', async () => {
    const one = await generateWith('fake-qwen:1b', { seeds: [0, 2] });
    const three = await generateWith('fake-qwen:1b', { seeds: [0, 2], concurrency: 3 });
    assert.equal(readFileSync(join(three.out, 'episodes.jsonl'), 'utf8'), readFileSync(join(one.out, 'episodes.jsonl'), 'utf8'));
  });
});

describe('before any episode runs', () => {
  it('refuses a model whose digest cannot be read', async () => {
    const withoutDigests: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (!String(input).endsWith('/api/tags')) return response;
      const body = (await response.json()) as { models: { digest?: string }[] };
      for (const model of body.models) delete model.digest;
      return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
    };
    await assert.rejects(inspectModel(fake.url, 'fake-qwen:1b', { client: new Ollama({ host: fake.url, fetch: withoutDigests }) }), /cannot read the digest of model "fake-qwen:1b"/);
  });

  it('exits 2 with the fix, and writes nothing, when Ollama is down or the model is not pulled', async () => {
    const workdir = temporaryDirectory();
    const missing = await runCliAsync(workdir, 'generate', 'tool-world-v1', '--policy', 'ollama:qwen2.5:1.5b', '--ollama-host', fake.url, '--out', 'never');
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /model "qwen2.5:1.5b" is not pulled on http:\/\/127\.0\.0\.1:\d+ \(it has: fake-broken:1b, .*\) — fix: run `ollama pull qwen2.5:1.5b`/);
    const down = await runCliAsync(workdir, 'generate', 'tool-world-v1', '--policy', 'ollama:fake-qwen:1b', '--ollama-host', 'http://127.0.0.1:9', '--out', 'never');
    assert.equal(down.status, 2);
    assert.match(down.stderr, /Ollama is not answering at http:\/\/127\.0\.0\.1:9 .* — fix: start it with `ollama serve`/);
    assert.equal(existsSync(join(workdir, 'never')), false);
  });

  it('reads OLLAMA_HOST, which the client itself ignores', async () => {
    const workdir = temporaryDirectory();
    const saved = process.env.OLLAMA_HOST;
    process.env.OLLAMA_HOST = fake.url;
    try {
      const result = await runCliAsync(workdir, 'generate', 'tool-world-v1', '--seeds', '0..0', '--task', 'find-open-bugs', '--policy', 'ollama:fake-qwen:1b', '--quiet');
      assert.equal(result.status, 0, result.stderr);
      assert.match(result.stdout, /1 records written, 0 rejected, 0 infra errors \(model server\), tasks completed 1\/1/);
      assert.match(result.stderr, /fake-qwen:1b \([0-9a-f]{12}, qwen2\) at http:\/\/127\.0\.0\.1:\d+, Ollama 0\.12\.3, native mode, hermes codec/);
    } finally {
      if (saved === undefined) delete process.env.OLLAMA_HOST;
      else process.env.OLLAMA_HOST = saved;
    }
  });
});

describe('gate', () => {
  it('passes a model that calls tools well, fails one that claims instead, and compares them on the same episodes', async () => {
    const theLane = lane();
    const good = await runGate({ lane: theLane, policy: await preparePolicy(theLane, parsePolicySpec('ollama:fake-qwen:1b'), { host: fake.url }), label: 'fake-qwen:1b', turns: 5 });
    assert.equal(good.pass, true, good.missed.join('; '));
    assert.deepEqual([good.answered, good.cap_hits, good.tool_turns, good.completion.successes], [5, 0, 5, 5]);
    assert.equal(good.contract_kept, good.calls_emitted);
    const liar = await runGate({ lane: theLane, policy: await preparePolicy(theLane, parsePolicySpec('ollama:fake-liar:1b'), { host: fake.url }), label: 'fake-liar:1b', turns: 5 });
    assert.equal(liar.pass, false);
    assert.deepEqual(liar.missed, ['tool_turns 0/5 is below 60%', 'contract 0/0 is below 90%']);
    const comparison = compareGates(liar, good);
    assert.equal(comparison.mcnemar.second_only, 5);
    assert.equal(comparison.mcnemar.p_value, 0.0625);
    assert.equal(comparison.difference, 1);
  });

  it('prints one line per episode and the verdict, and exits 1 naming each missed condition', async () => {
    const workdir = temporaryDirectory();
    const passed = await runCliAsync(workdir, 'gate', 'tool-world-v1', '--policy', 'ollama:fake-qwen:1b', '--ollama-host', fake.url, '--turns', '3');
    assert.equal(passed.status, 0, passed.stderr);
    const lines = passed.stdout.trim().split('\n');
    assert.equal(lines.length, 4);
    // The gate plays the lane's first episodes, so episode 01 asks what the sample's first record asks, cut at 60 characters.
    const sample = JSON.parse(readFileSync(join(REPO_ROOT, 'datasets', 'tool-world-v1', 'episodes.jsonl'), 'utf8').split('\n')[0]!) as EpisodeRecord;
    const asked = sample.messages.find((message) => message.role === 'user')!.content;
    assert.equal(sample.task.id, 'find-open-bugs');
    assert.ok(lines[0]!.startsWith('episode 01 | emitted=1 executed=1 rejected=0 cap=no done=yes | '), lines[0]);
    assert.ok(lines[0]!.endsWith(` | ${asked.length > 60 ? `${asked.slice(0, 59)}…` : asked}`), lines[0]);
    assert.match(lines[3]!, /^gate: ollama:fake-qwen:1b PASS episodes=3 answered=3 cap_hits=0 tool_turns=3 calls 3\/3 executed \(100%\) contract 3\/3 \(100%\) completed 3\/3 \[0\.44, 1\.00\] \(wall \d+\.\ds\)$/);
    const failed = await runCliAsync(workdir, 'gate', 'tool-world-v1', '--policy', 'ollama:fake-liar:1b', '--ollama-host', fake.url, '--turns', '2');
    assert.equal(failed.status, 1);
    assert.match(failed.stdout, /gate: ollama:fake-liar:1b FAIL /);
    assert.match(failed.stdout, /^MISS tool_turns 0\/2 is below 60%$/m);
    const compared = await runCliAsync(workdir, 'gate', 'tool-world-v1', '--compare', 'ollama:fake-liar:1b', 'ollama:fake-qwen:1b', '--ollama-host', fake.url, '--turns', '2');
    assert.equal(compared.status, 0, compared.stderr);
    assert.match(compared.stdout, /compare: ollama:fake-liar:1b completed 0\/2, ollama:fake-qwen:1b completed 2\/2; paired difference \+1\.000 \(only ollama:fake-liar:1b: 0, only ollama:fake-qwen:1b: 2\), exact McNemar p=0\.500/);
    const down = await runCliAsync(workdir, 'gate', 'tool-world-v1', '--policy', 'ollama:fake-qwen:1b', '--ollama-host', 'http://127.0.0.1:9');
    assert.equal(down.status, 2);
  });
});
