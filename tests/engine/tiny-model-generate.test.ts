// `generate --policy ollama:<tiny>` and `--policy openai:<tiny>` end to end
// through a real inference engine: the tiny qwen2 model scripts/tiny-model.sh
// trains here, run by llama.cpp (node-llama-cpp) behind the engine's Ollama
// and OpenAI routes. Real tokenisation, the model's real <|im_end|> stop, the
// hermes codec reading a real model's output, records that replay on a fresh
// world and name the file's sha256. What this does not show is a capable
// model: the tiny one picks our tools but rarely copies the right values.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { tinyModelPath } from '../../src/cli/engine-command.js';
import { FACTORY_VERSION } from '../../src/core/package-paths.js';
import { startEngine, type EngineServer } from '../../src/engine/engine-server.js';
import { auditDataset } from '../../src/dataset-replay/audit-dataset.js';
import { generateDataset } from '../../src/generation/generate-dataset.js';
import { parsePolicySpec, preparePolicy } from '../../src/selection/policy-selection.js';
import { replayDataset } from '../../src/dataset-replay/replay-dataset.js';
import { loadLane } from '../../src/lanes/lane-loader.js';
import type { EpisodeRecord } from '../../src/records/episode-record.js';
import { CLI, REPO_ROOT, runCliAsync, temporaryDirectory } from '../helpers.js';

// What `episode-factory engine` reports, so the CLI's records and the library's can be compared byte for byte.
const ENGINE_VERSION = `episode-factory-engine ${FACTORY_VERSION}`;
let engine: EngineServer;
let digest: string;
before(async () => {
  delete process.env.SOURCE_DATE_EPOCH;
  const modelPath = tinyModelPath();
  digest = createHash('sha256').update(readFileSync(modelPath)).digest('hex');
  engine = await startEngine({ modelPath, name: 'tiny-qwen2:latest', version: ENGINE_VERSION });
});
after(async () => {
  await engine?.close();
});

const lane = () => loadLane('tool-world-v1', REPO_ROOT);
const readRecords = (dir: string) => readFileSync(join(dir, 'episodes.jsonl'), 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as EpisodeRecord);
const policyActor = (record: EpisodeRecord) => record.provenance.actors.find((actor) => actor.role === 'policy') as Record<string, any>;

async function generateWith(spec: string, options: { mode?: string } = {}) {
  const theLane = lane();
  const connection = spec.startsWith('openai:') ? { baseUrl: `${engine.url}/v1` } : { host: engine.url };
  const policy = await preparePolicy(theLane, parsePolicySpec(spec), { ...connection, ...options });
  const out = temporaryDirectory();
  const summary = await generateDataset({ lane: theLane, outDir: out, seeds: { from: 0, to: 1 }, policy, concurrency: 1, formats: ['jsonl'] });
  return { out, summary, records: readRecords(out) };
}

/** Every call the model made, as the record holds it. */
function calls(records: EpisodeRecord[]): { name: string; arguments: string }[] {
  return records.flatMap((record) => record.messages.flatMap((message) => ((message as { tool_calls?: { name: string; arguments: string }[] }).tool_calls ?? [])));
}

/** The model's output went through the real parser: calls name the lane's tools and carry JSON objects. */
function assertRealCalls(records: EpisodeRecord[]): void {
  const catalog = new Set(records[0]!.tools.map((tool) => tool.name));
  const made = calls(records);
  assert.ok(made.length >= records.length, `the tiny model calls a tool in (nearly) every episode; it made ${made.length} calls in ${records.length} episodes`);
  const known = made.filter((call) => catalog.has(call.name));
  assert.ok(known.length / made.length >= 0.75, `${known.length} of ${made.length} calls name a tool of the lane`);
  for (const call of made) assert.equal(typeof JSON.parse(call.arguments), 'object');
}

async function assertReplaysAndAudits(out: string, count: number): Promise<void> {
  const replay = await replayDataset(out);
  assert.deepEqual([replay.verified, replay.failed], [count, 0], 'replay re-issues the model\'s recorded actions on a fresh world');
  const audit = await auditDataset(out, { sample: count });
  assert.deepEqual(audit.findings, []);
}

describe('generate with the tiny model through the engine', { timeout: 10 * 60_000 }, () => {
  it('ollama:, native tool calling: verified records that name the file\'s sha256, and the same seeds give the same bytes', async () => {
    const first = await generateWith('ollama:tiny-qwen2');
    assert.deepEqual([first.summary.episodes, first.summary.written, first.summary.rejected, first.summary.infra_errors], [10, 10, 0, 0]);
    for (const record of first.records) {
      const actor = policyActor(record);
      assert.equal(actor.kind, 'model');
      assert.equal(actor.digest, digest);
      assert.equal(actor.family, 'qwen2');
      assert.equal(actor.mode, 'native');
      assert.equal(actor.codec, 'hermes');
      assert.equal(actor.ollama_version, ENGINE_VERSION);
      assert.deepEqual(Object.keys(actor.options).sort(), ['num_predict', 'seed', 'temperature']);
      assert.equal(record.provenance.lineage.variant, 'ollama:tiny-qwen2');
    }
    assertRealCalls(first.records);
    await assertReplaysAndAudits(first.out, 10);
    const second = await generateWith('ollama:tiny-qwen2');
    assert.equal(readFileSync(join(second.out, 'episodes.jsonl'), 'utf8'), readFileSync(join(first.out, 'episodes.jsonl'), 'utf8'), 'a seeded model on the same engine gives byte-identical records');
  });

  it('ollama: --mode raw: the factory renders the prompt, the engine decodes it untemplated, the hermes codec reads the calls', async () => {
    const raw = await generateWith('ollama:tiny-qwen2', { mode: 'raw' });
    assert.deepEqual([raw.summary.written, raw.summary.rejected, raw.summary.infra_errors], [10, 0, 0]);
    for (const record of raw.records) {
      assert.equal(policyActor(record).mode, 'raw');
      assert.equal(policyActor(record).digest, digest);
    }
    assertRealCalls(raw.records);
    await assertReplaysAndAudits(raw.out, 10);
  });

  it('openai:, chat completions over server-sent events: the digest comes from the engine\'s Ollama routes, the context from /v1/models', async () => {
    const openai = await generateWith('openai:tiny-qwen2:latest');
    assert.deepEqual([openai.summary.written, openai.summary.rejected, openai.summary.infra_errors], [10, 0, 0]);
    for (const record of openai.records) {
      const actor = policyActor(record);
      assert.equal(actor.provider, 'openai');
      assert.equal(actor.digest, digest);
      assert.equal(actor.server, 'ollama');
      assert.equal(actor.stream, true);
      assert.equal(actor.max_model_len, 4096);
      assert.match(record.provenance.lineage.generate_command, new RegExp(` --model-digest tiny-qwen2:latest=${digest} `));
    }
    assertRealCalls(openai.records);
    await assertReplaysAndAudits(openai.out, 10);
  });

  it('the CLI: `engine tiny --json` serves the model, `generate --policy ollama:tiny-qwen2 --ollama-host` writes what the library wrote, and SIGTERM stops it', async () => {
    const library = await generateWith('ollama:tiny-qwen2');
    const served = spawn(process.execPath, [CLI, 'engine', 'tiny', '--port', '0', '--json'], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    served.stderr.on('data', (chunk) => (stderr += String(chunk)));
    try {
      const [line] = (await once(createInterface({ input: served.stdout }), 'line')) as [string];
      const announced = JSON.parse(line) as { url: string; name: string; digest: string; architecture: string; codec: string };
      assert.deepEqual([announced.name, announced.digest, announced.architecture, announced.codec], ['tiny-qwen2:latest', digest, 'qwen2', 'hermes']);
      const out = temporaryDirectory();
      const result = await runCliAsync(REPO_ROOT, 'generate', 'tool-world-v1', '--seeds', '0..1', '--policy', 'ollama:tiny-qwen2', '--ollama-host', announced.url, '--out', out, '--format', 'jsonl');
      assert.equal(result.status, 0, result.stderr);
      assert.match(result.stderr, new RegExp(`tiny-qwen2 \\(${digest.slice(0, 12)}, qwen2\\)`));
      assert.equal(readFileSync(join(out, 'episodes.jsonl'), 'utf8'), readFileSync(join(library.out, 'episodes.jsonl'), 'utf8'), 'a separate engine process decodes the same bytes');
    } finally {
      served.kill('SIGTERM');
      const [status] = (await once(served, 'exit')) as [number | null];
      assert.equal(status, 0, stderr);
      assert.match(stderr, /episode-factory engine: stopped/);
    }
  });
});
