// The benchmark behind `npm run bench` (never part of `npm test`). Every
// figure is measured in this one run, so the ratios hold on a noisy machine:
//   1. the floor: bare MCP SDK callTool round trips over InMemoryTransport
//      against a trivial server;
//   2. the factory: verified episodes per second on a scripted lane
//      (generation + replay + predicates + writing), with 1 worker and with N;
//   3. the factory's cost per tool call (generation and replay both count)
//      over the floor's cost per call;
//   2b. the machine's ceiling for that speed-up: the same single-thread run
//      alone, then two at once in separate processes;
//   4. peak RSS of a 100,000-episode run, and Arrow/Parquet write rates, as
//      generate writes them (columns built in the parts, files from those);
//   5. the HTML report of that run: time and peak RSS to write it, its size,
//      and (with Debian's Chromium) how long the page takes to be ready and
//      to open an episode;
//   6. a server world: what a connection costs with a new child (spawn to
//      initialize answered) and with the kept child re-pointed, and verified
//      episodes per second on filesystem-server-v1 with a child per
//      connection, with kept children on 1 worker and on N, beside the
//      scripted lane's;
//   7. `env serve` on tool-world-v1: /step requests answered per second over
//      real HTTP (the server in a child process, as a trainer would run it),
//      with 1 episode at a time and with 16 at once, each episode playing its
//      task's own solution from reset to done and then closed;
//   8. model backends: what the client adds to one model turn against local
//      fake servers (bench/model-backend-bench.ts), the openai: backend
//      streamed and whole, and the Ollama one, over a bare HTTP round trip;
//   9. the per-phase profile of an episode on one thread (bench/episode-profile.ts);
//  10. the engine: a model turn through `episode-factory engine` with the tiny
//      model (llama.cpp, one thread), cold and with the prefix cached, its
//      decode rate and overheads, and whole verified episodes with it
//      (bench/engine-bench.ts); skipped, saying so, when scripts/tiny-model.sh
//      has not built the model;
//  11. task synthesis (bench/synthesis-bench.ts), run with --synthesis-only;
//  12. dataset commands at scale (bench/scale-bench.ts), run with --scale:
//      the peak RSS of each at 25,000 and 250,000 records.
// Options: --episodes N (the big run; default 100000), --speed-episodes N
// (each speed run; default 2000), --workers N (default: the number of cores,
// at least 2), --lane NAME (default tool-world-v1), --server-episodes N (each
// server-world run; default 72), --env-episodes N (each env run; default
// 400), --env-only (measure section 7 alone), --model-only (section 8
// alone), --profile-only (section 9 alone: the per-phase profile of an
// episode, bench/episode-profile.ts), --profile-episodes N (default 500),
// --engine-only (section 10 alone), --columnar-only (the Arrow and Parquet rates of section 4 alone, on
// --speed-episodes records), --ceiling-only (section 2's speed-up beside the
// machine's ceiling alone), --synthesis-only (section 11 alone: `lanes synthesize`
// on four worlds, distinct tasks in lanes/, the near-duplicate share of a
// synthesised lane's episodes beside tool-world-v1's; bench/synthesis-bench.ts),
// --synthesis-episodes N (default 25000, the figure), --scale (section
// 12 alone: every dataset command's peak RSS at a tenth of --scale-episodes and
// at it; bench/scale-bench.ts), --scale-episodes N (default 250000), --json.

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { childEnvironment } from '../src/core/child-environment.js';
import { runPeakRss } from './peak-rss-child.js';
import { measureScale, scaleRows } from './scale-bench.js';
import { generateDataset } from '../src/generation/generate-dataset.js';
import { loadLane } from '../src/lanes/lane-loader.js';
import { ARROW_FILE, PARQUET_FILE } from '../src/records/columnar-names.js';
import { BATCH_ROWS, writeColumnar, writeColumnarBatches } from '../src/records/columnar-files.js';
import { ipcStream } from '../src/records/arrow-ipc.js';
import { RecordBatchBuilder } from '../src/records/arrow-builders.js';
import { rebatch } from '../src/records/arrow-concatenation.js';
import { recordToRow } from '../src/records/arrow-schema.js';
import { tableFromIPC } from 'apache-arrow';
import { wasmMemory } from 'parquet-wasm';
import type { EpisodeRecord } from '../src/records/episode-record.js';
import { readLines } from '../src/records/jsonl.js';
import { DEFAULT_MAX_EPISODES } from '../src/dataset/report-data.js';
import { chromiumInstalled, launchChromium } from '../tests/headless-chromium.js';
import { substream } from '../src/core/random.js';
import { filesystemServerWorld } from '../src/world/servers/filesystem/filesystem-world.js';
import { openWorldSession } from '../src/world/world-session.js';
import { measureModelBackends, type ModelBackendFigures } from './model-backend-bench.js';
import { formatEpisodeProfile, measureEpisodeProfile } from './episode-profile.js';
import { measureEngine, tinyModelBuilt, type EngineFigures, type TurnTimings } from './engine-bench.js';
import { measureSynthesis, synthesisRows } from './synthesis-bench.js';
import { policyFactoryFor } from '../src/selection/scripted-policy-factory.js';
import { resolveProducedAt } from '../src/generation/produced-at.js';
import { produceEpisode } from '../src/verify/episode-production.js';
import { recordedActions } from '../src/verify/replay-policy.js';

const { values: flags } = parseArgs({
  options: {
    episodes: { type: 'string', default: '100000' },
    'speed-episodes': { type: 'string', default: '2000' },
    workers: { type: 'string' },
    lane: { type: 'string', default: 'tool-world-v1' },
    'server-episodes': { type: 'string', default: '72' },
    'env-episodes': { type: 'string', default: '400' },
    'env-only': { type: 'boolean', default: false },
    'model-only': { type: 'boolean', default: false },
    'engine-only': { type: 'boolean', default: false },
    'profile-only': { type: 'boolean', default: false },
    'columnar-only': { type: 'boolean', default: false },
    'ceiling-only': { type: 'boolean', default: false },
    'synthesis-only': { type: 'boolean', default: false },
    'synthesis-episodes': { type: 'string', default: '25000' },
    scale: { type: 'boolean', default: false },
    'scale-episodes': { type: 'string', default: '250000' },
    'profile-episodes': { type: 'string', default: '500' },
    json: { type: 'boolean', default: false },
  },
});
const REPO = new URL('../', import.meta.url).pathname;
const lane = loadLane(flags.lane!, REPO);
const workers = Math.max(2, Number(flags.workers ?? availableParallelism()));
const tasks = lane.document.tasks.length;
const seedsFor = (episodes: number) => ({ from: 0, to: Math.max(1, Math.ceil(episodes / tasks)) - 1 });
const scratch = mkdtempSync(join(tmpdir(), 'ef-bench-'));
const log = (message: string) => process.stderr.write(`bench: ${message}\n`);

async function measureFloor(calls: number): Promise<number> {
  const server = new Server({ name: 'floor', version: '1' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [{ name: 'echo', description: 'echo x', inputSchema: { type: 'object', properties: { x: { type: 'integer' } } } }],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => ({ content: [{ type: 'text', text: String(request.params.arguments?.x) }] }));
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'floor', version: '1' });
  await client.connect(clientSide);
  await client.listTools();
  for (let index = 0; index < 2000; index++) await client.callTool({ name: 'echo', arguments: { x: index } });
  const started = performance.now();
  for (let index = 0; index < calls; index++) await client.callTool({ name: 'echo', arguments: { x: index } });
  const seconds = (performance.now() - started) / 1000;
  await client.close();
  return seconds / calls;
}

/** Tool calls the policy made across a dataset's records; replay makes each again. */
async function toolCalls(dir: string): Promise<number> {
  let calls = 0;
  for await (const line of readLines(join(dir, 'episodes.jsonl'))) {
    const record = JSON.parse(line.text) as { messages: { role: string; tool_calls?: unknown[] }[] };
    for (const message of record.messages) if (message.role === 'assistant') calls += message.tool_calls?.length ?? 0;
  }
  return calls;
}

async function measureFactory(episodes: number, workerCount: number) {
  const out = join(scratch, `speed-${workerCount}`);
  const summary = await generateDataset({ lane, outDir: out, seeds: seedsFor(episodes), workers: workerCount, formats: ['jsonl', 'arrow', 'parquet'] });
  const calls = (await toolCalls(out)) * 2;
  rmSync(out, { recursive: true, force: true });
  return { episodes: summary.episodes, verified: summary.written, seconds: summary.wall_seconds, calls, workers: summary.workers };
}

const SERVER_LANE = 'filesystem-server-v1';

/** Verified episodes per second on the server lane: each episode spawns the real server, and so does its replay. */
async function measureServerLane(episodes: number, workerCount: number) {
  const serverLane = loadLane(SERVER_LANE, REPO);
  const perSeed = serverLane.document.tasks.length;
  const out = join(scratch, `server-${workerCount}`);
  const summary = await generateDataset({ lane: serverLane, outDir: out, seeds: { from: 0, to: Math.max(1, Math.ceil(episodes / perSeed)) - 1 }, workers: workerCount, formats: ['jsonl'] });
  rmSync(out, { recursive: true, force: true });
  return { episodes: summary.episodes, verified: summary.written, seconds: summary.wall_seconds, workers: summary.workers, episodes_per_second: summary.written / summary.wall_seconds };
}

/** Runs `work` with a child per connection (no kept child), as EPISODE_FACTORY_FRESH_SERVERS=1 does. */
async function withFreshServers<T>(work: () => Promise<T>): Promise<T> {
  process.env.EPISODE_FACTORY_FRESH_SERVERS = '1';
  try {
    return await work();
  } finally {
    delete process.env.EPISODE_FACTORY_FRESH_SERVERS;
  }
}

/** Median of 10 connections, each on a fresh sandbox: a new child (spawn to initialize answered), or the kept child re-pointed and initialized. */
async function measureConnect(): Promise<{ median_ms: number; min_ms: number; max_ms: number }> {
  const times: number[] = [];
  for (let index = 0; index < 11; index++) {
    const session = await openWorldSession(filesystemServerWorld, substream(index, 'world'), {}, { pinnedDate: '2026-01-01T00:00:00Z' });
    const started = performance.now();
    const connection = await session.connect({});
    if (index > 0) times.push(performance.now() - started); // the first starts the kept child
    await connection.close();
    await session.dispose();
  }
  times.sort((a, b) => a - b);
  return { median_ms: (times[4]! + times[5]!) / 2, min_ms: times[0]!, max_ms: times[9]! };
}

const runChild = (args: string[]) => runPeakRss(args);

/** Records held in memory for the columnar rates that skip JSONL: what a worker holding its part's records would pay. */
const IN_MEMORY_ROWS = 5000;
/** The rows of one part, as `generate` cuts a long run. */
const PART_ROWS = 200;

/**
 * Arrow and Parquet as `generate` writes them now: each part's columns built
 * from the records its thread holds (typed builders, serialised to IPC), then
 * the files written from those parts' columns (read back, cut into 1,000-row
 * batches, written). Also what a writer from episodes.jsonl pays (dedup).
 */
async function measureColumnar(jsonl: string, rows: number) {
  const arrowStarted = performance.now();
  await writeColumnar(jsonl, { arrow: join(scratch, ARROW_FILE) });
  const arrowSeconds = (performance.now() - arrowStarted) / 1000;
  const parquetStarted = performance.now();
  await writeColumnar(jsonl, { parquet: join(scratch, PARQUET_FILE) });
  const parquetSeconds = (performance.now() - parquetStarted) / 1000;
  const megabytes = statSync(jsonl).size / 1e6;
  const records: EpisodeRecord[] = [];
  for await (const line of readLines(jsonl)) {
    if (records.length >= IN_MEMORY_ROWS) break;
    if (line.terminated && line.text.trim() !== '') records.push(JSON.parse(line.text) as EpisodeRecord);
  }
  // The work of the threads that ran the parts: each part's rows into Arrow columns, as IPC.
  const buildParts = () => {
    const parts: Uint8Array[] = [];
    for (let start = 0; start < records.length; start += PART_ROWS) {
      const builder = new RecordBatchBuilder();
      for (const record of records.slice(start, start + PART_ROWS)) builder.append(recordToRow(record));
      parts.push(ipcStream(builder.finishBatch()));
    }
    return parts;
  };
  // Compiled code, as a worker has after its first parts.
  for (let pass = 0; pass < 3; pass++) buildParts();
  const buildStarted = performance.now();
  const parts = buildParts();
  const buildSeconds = (performance.now() - buildStarted) / 1000;
  // The work of the main thread: the files from the parts' columns.
  const fromParts = async (outputs: { arrow?: string; parquet?: string }) => {
    const started = performance.now();
    await writeColumnarBatches(rebatch((function* () { for (const part of parts) yield* tableFromIPC(part).batches; })(), BATCH_ROWS), outputs);
    return records.length / ((performance.now() - started) / 1000);
  };
  for (let pass = 0; pass < 2; pass++) await fromParts({ arrow: join(scratch, 'warm.arrow'), parquet: join(scratch, 'warm.parquet') });
  const arrowFromParts = await fromParts({ arrow: join(scratch, 'parts.arrow') });
  const parquetFromParts = await fromParts({ parquet: join(scratch, 'parts.parquet') });
  const buildRate = records.length / buildSeconds;
  return {
    arrow_rows_per_second: rows / arrowSeconds,
    arrow_mb_per_second: megabytes / arrowSeconds,
    parquet_rows_per_second: rows / parquetSeconds,
    parquet_mb_per_second: megabytes / parquetSeconds,
    in_memory_rows: records.length,
    /** Rows per second a part's thread turns into Arrow columns (builders and IPC). */
    parts_build_rows_per_second: buildRate,
    /** Rows per second the main thread writes each file from the parts' columns. */
    arrow_from_parts_rows_per_second: arrowFromParts,
    parquet_from_parts_rows_per_second: parquetFromParts,
    /** Each format end to end on one core: the columns built, then the file written. */
    arrow_one_core_rows_per_second: 1 / (1 / buildRate + 1 / arrowFromParts),
    parquet_one_core_rows_per_second: 1 / (1 / buildRate + 1 / parquetFromParts),
    parquet_wasm_memory_mb: wasmMemory().buffer.byteLength / 1e6,
    arrow_bytes: statSync(join(scratch, ARROW_FILE)).size,
    parquet_bytes: statSync(join(scratch, PARQUET_FILE)).size,
    jsonl_bytes: statSync(jsonl).size,
  };
}

/**
 * What two cores give this workload at best: the same single-thread run
 * alone, then two of them at once in separate processes (nothing shared, no
 * coordination). Memory bandwidth, caches and the garbage collectors' own
 * threads are shared by the cores; a speed-up of 2 workers is bounded by this.
 */
async function measureCeiling(episodes: number) {
  const seeds = seedsFor(episodes);
  const run = (name: string) =>
    new Promise<number>((resolve, reject) => {
      const child = spawn(process.execPath, [join(REPO, 'bin', 'episode-factory.js'), 'generate', lane.path, '--seeds', `${seeds.from}..${seeds.to}`, '--workers', '1', '--format', 'jsonl', '--json', '--quiet', '--out', join(scratch, name)], {
        cwd: REPO,
        env: childEnvironment(process.env).env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      child.stdout.on('data', (chunk) => (stdout += String(chunk)));
      child.once('error', reject);
      child.once('close', (status) => (status === 0 ? resolve(JSON.parse(stdout).wall_seconds as number) : reject(new Error(`generate exited ${status}`))));
    });
  const alone = await run('ceiling-alone');
  const pair = await Promise.all([run('ceiling-a'), run('ceiling-b')]);
  for (const name of ['ceiling-alone', 'ceiling-a', 'ceiling-b']) rmSync(join(scratch, name), { recursive: true, force: true });
  return { episodes: (seeds.to - seeds.from + 1) * tasks, alone_seconds: alone, pair_seconds: pair, ceiling: (2 * alone) / Math.max(...pair) };
}

interface BrowserTimings {
  /** First paint with content, the list usable (the viewer ran), the whole file read, one episode opened. */
  first_paint_ms: number;
  ready_ms: number;
  parsed_ms: number;
  open_episode_ms: number;
}

/** The page's own timings from navigation start; null without Chromium. */
async function measureReportInBrowser(path: string): Promise<BrowserTimings | null> {
  if (!chromiumInstalled()) return null;
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    await page.goto(pathToFileURL(path).href, { waitUntil: 'load', timeout: 120_000 });
    // A small page can be loaded before its first contentful paint is reported.
    await page.waitForFunction("performance.getEntriesByName('first-contentful-paint').length > 0", undefined, { timeout: 10_000 }).catch(() => undefined);
    const timings = JSON.parse(
      (await page.evaluate(`JSON.stringify({
        first_paint_ms: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN,
        ready_ms: Number(document.documentElement.getAttribute('data-viewer-ready-ms')),
        parsed_ms: performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd,
      })`)) as string,
    ) as Omit<BrowserTimings, 'open_episode_ms'>;
    const last = await page.locator('#episode-list li[data-record-id]').last().getAttribute('data-record-id');
    const opening = performance.now();
    await page.click(`#episode-list button[data-record-id="${last}"]`);
    await page.waitForSelector(`#episode-detail[data-record-id="${last}"]`);
    return { ...timings, open_episode_ms: performance.now() - opening };
  } finally {
    await browser.close();
  }
}

async function measureReport(dir: string) {
  const out = join(scratch, 'report.html');
  const run = await runChild(['report', dir, '--out', out, '--quiet']);
  if (run.status !== 0) throw new Error(`report exited ${run.status}`);
  return { wall_seconds: run.wall_seconds, peak_rss_mb: run.max_rss_bytes / 1e6, html_bytes: statSync(out).size, browser: await measureReportInBrowser(out) };
}

const ENV_LANE = 'tool-world-v1';
const ENV_CONCURRENCY = 16;

/** Each (task, seed) of the env runs with its solution's assistant turns in OpenAI chat shape, as a client sends them. */
async function envSolutions(episodes: number) {
  const envLane = loadLane(ENV_LANE, REPO);
  const plays: { task: string; seed: number; turns: unknown[] }[] = [];
  for (let seed = 0; plays.length < episodes; seed++) {
    for (const task of envLane.document.tasks) {
      if (plays.length >= episodes) break;
      const record = await produceEpisode({ lane: envLane, task, seed }, policyFactoryFor(envLane), { producedAt: resolveProducedAt(envLane) });
      const turns = recordedActions(record.messages).map((action) => {
        if (action.kind === 'final_text') return { role: 'assistant', content: action.text };
        if (action.kind === 'malformed_tool_call') return { role: 'assistant', content: action.raw };
        const calls = action.kind === 'tool_call' ? [{ name: action.name, arguments: action.arguments }] : action.calls;
        return { role: 'assistant', content: action.text ?? '', tool_calls: calls.map((call, index) => ({ id: `c${index}`, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.arguments) } })) };
      });
      plays.push({ task: task.id, seed, turns });
    }
  }
  return plays;
}

/** `env serve` in a child process, driven over HTTP by `concurrency` clients at once until every play has run. */
async function measureEnv(plays: { task: string; seed: number; turns: unknown[] }[], concurrency: number) {
  const child = spawn(process.execPath, [join(REPO, 'bin', 'episode-factory.js'), 'env', 'serve', ENV_LANE, '--port', '0', '--json', '--max-episodes', String(concurrency)], {
    cwd: REPO,
    env: childEnvironment(process.env).env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let stdout = '';
      child.stdout.on('data', (chunk) => {
        stdout += String(chunk);
        if (stdout.includes('\n')) resolve(JSON.parse(stdout.split('\n')[0]!).url);
      });
      child.once('close', (status) => reject(new Error(`env serve exited ${status}`)));
    });
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(url + path, { method, ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }) });
      const answer = (await response.json()) as Record<string, any>;
      if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(answer)}`);
      return answer;
    };
    let next = 0;
    let steps = 0;
    let rewarded = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < plays.length) {
          const play = plays[next++]!;
          const opened = await call('POST', '/reset', { task: play.task, seed: play.seed, agent: 'bench' });
          for (const message of play.turns) {
            const answer = await call('POST', '/step', { episode_id: opened.episode_id, message });
            steps++;
            if (answer.done) {
              rewarded += answer.reward.reward;
              break;
            }
          }
          await call('DELETE', `/episodes/${opened.episode_id}`);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    // Every episode plays its task's own solution: a speed measured on episodes that went wrong would measure something else.
    if (rewarded !== plays.length) throw new Error(`env bench: ${rewarded} of ${plays.length} solution episodes earned reward 1`);
    return { concurrency, episodes: plays.length, steps, rewarded, seconds, steps_per_second: steps / seconds, episodes_per_second: plays.length / seconds };
  } finally {
    child.kill('SIGTERM');
  }
}

async function measureEnvSection() {
  const episodes = Number(flags['env-episodes']);
  log(`env serve: ${ENV_LANE}, ${episodes} episodes over HTTP with 1 client, then ${ENV_CONCURRENCY} at once ...`);
  const plays = await envSolutions(episodes);
  const one = await measureEnv(plays, 1);
  const many = await measureEnv(plays, ENV_CONCURRENCY);
  return { lane: ENV_LANE, one, many, speedup: many.steps_per_second / one.steps_per_second };
}

function envRows(env: Awaited<ReturnType<typeof measureEnvSection>>): [string, string, string, string][] {
  return [
    [`env serve ${env.lane}: /step answered per second, 1 episode at a time`, `${env.one.steps_per_second.toFixed(0)} (${env.one.episodes_per_second.toFixed(1)} episodes/s, ${env.one.steps} steps)`, '', ''],
    [`  ${env.many.concurrency} episodes at once`, `${env.many.steps_per_second.toFixed(0)} (${env.many.episodes_per_second.toFixed(1)} episodes/s; ${env.speedup.toFixed(2)}× one at a time)`, '', ''],
  ];
}

function modelRows(model: ModelBackendFigures): [string, string, string, string][] {
  return [
    [`model turn, bare HTTP round trip (median of ${model.turns})`, `${model.floor_ms.toFixed(2)} ms`, '', ''],
    ['  openai: policy turn, streamed / whole', `${model.openai_streamed_ms.toFixed(2)} / ${model.openai_whole_ms.toFixed(2)} ms`, '', ''],
    ['  openai: backend overhead per turn, streamed / whole', `${model.openai_streamed_overhead_ms.toFixed(2)} / ${model.openai_whole_overhead_ms.toFixed(2)} ms`, '', ''],
    ['  ollama: policy turn, streamed', `${model.ollama_streamed_ms.toFixed(2)} ms`, '', ''],
  ];
}

type Row = [string, string, string, string];

function engineRows(engine: EngineFigures | null): Row[] {
  if (engine === null) return [['engine (tiny model through llama.cpp)', 'not measured: run scripts/tiny-model.sh first', '', '']];
  const turn = (timings: TurnTimings) =>
    `${timings.wall_ms.toFixed(0)} ms (prompt ${timings.prompt_tokens_evaluated} tokens in ${timings.prompt_eval_ms.toFixed(0)} ms, ${timings.output_tokens} out in ${timings.eval_ms.toFixed(0)} ms)`;
  return [
    [`engine, tiny model (${(engine.model.parameters / 1e6).toFixed(0)}M, ${engine.model.architecture}, 1 thread): decode`, `${engine.decode_tokens_per_second.toFixed(1)} tokens/s`, '', ''],
    ['  prompt evaluation', `${engine.prompt_tokens_per_second.toFixed(0)} tokens/s`, '', ''],
    [`  first turn of tool-world-v1, cold (median of ${engine.turns})`, turn(engine.cold), '', ''],
    ['  the same turn, prefix cached', turn(engine.warm), '', ''],
    ['  overhead per turn: engine (render, tokenise, parse) / HTTP', `${engine.engine_overhead_ms.toFixed(1)} / ${engine.http_overhead_ms.toFixed(1)} ms`, '', ''],
    [
      `  generate --policy ollama:tiny-qwen2, ${engine.generate.episodes} episodes`,
      `${engine.generate.episodes_per_second.toFixed(2)} verified episodes/s, ${engine.generate.ms_per_model_turn.toFixed(0)} ms per model turn (${engine.generate.model_turns} turns, ${engine.generate.completed} completed)`,
      '',
      '',
    ],
  ];
}

async function maybeMeasureEngine(): Promise<EngineFigures | null> {
  if (!tinyModelBuilt()) {
    log('engine: the tiny model is not built (scripts/tiny-model.sh): not measured');
    return null;
  }
  log('engine: the tiny model through llama.cpp, turns and 10 episodes ...');
  return measureEngine();
}

function columnarRows(columnar: Awaited<ReturnType<typeof measureColumnar>>): Row[] {
  return [
    ['Arrow: rows/s on one core (columns built in the parts, then the file)', `${columnar.arrow_one_core_rows_per_second.toFixed(0)} rows/s`, '≥ 30,000 rows/s', verdict(columnar.arrow_one_core_rows_per_second >= 30_000)],
    ['Parquet: rows/s on one core (columns built in the parts, then the file)', `${columnar.parquet_one_core_rows_per_second.toFixed(0)} rows/s`, '≥ 30,000 rows/s', verdict(columnar.parquet_one_core_rows_per_second >= 30_000)],
    [`  a part's thread: its records into Arrow columns (${columnar.in_memory_rows} rows)`, `${columnar.parts_build_rows_per_second.toFixed(0)} rows/s`, '', ''],
    ['  main thread: Arrow file from the parts\' columns', `${columnar.arrow_from_parts_rows_per_second.toFixed(0)} rows/s`, '', ''],
    ['  main thread: Parquet file from the parts\' columns', `${columnar.parquet_from_parts_rows_per_second.toFixed(0)} rows/s (encoder memory ${columnar.parquet_wasm_memory_mb.toFixed(0)} MB)`, '', ''],
    ['  from episodes.jsonl (dedup): Arrow / Parquet', `${columnar.arrow_rows_per_second.toFixed(0)} / ${columnar.parquet_rows_per_second.toFixed(0)} rows/s (${columnar.arrow_mb_per_second.toFixed(1)} / ${columnar.parquet_mb_per_second.toFixed(1)} MB/s of JSONL)`, '', ''],
    ['sizes: JSONL / Arrow / Parquet', `${mb(columnar.jsonl_bytes)} / ${mb(columnar.arrow_bytes)} / ${mb(columnar.parquet_bytes)}`, '', ''],
  ];
}

function ceilingRows(ceiling: Awaited<ReturnType<typeof measureCeiling>>, speedup: number): Row[] {
  return [
    [
      `  the machine's ceiling: 2 separate single-thread runs at once`,
      `${ceiling.ceiling.toFixed(2)}× (alone ${ceiling.alone_seconds.toFixed(1)} s; together ${ceiling.pair_seconds.map((seconds) => seconds.toFixed(1)).join(' s, ')} s)`,
      '',
      '',
    ],
    ['  speed-up as a share of that ceiling', `${((100 * speedup) / ceiling.ceiling).toFixed(0)}%`, '', ''],
  ];
}

function printRows(rows: [string, string, string, string][]): void {
  const widths = [0, 1, 2, 3].map((column) => Math.max(...rows.map((row) => row[column]!.length), ['measure', 'figure', 'target', 'met'][column]!.length));
  const format = (row: readonly string[]) => row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd();
  process.stdout.write(`episode-factory bench — ${lane.name}, ${cpus().length} cores, Node ${process.version}\n`);
  process.stdout.write(format(['measure', 'figure', 'target', 'met']) + '\n' + format(widths.map((width) => '-'.repeat(width))) + '\n');
  for (const row of rows) process.stdout.write(format(row) + '\n');
}

try {
  if (flags['model-only']) {
    log('model backends: policy turns against local fake servers ...');
    const model = await measureModelBackends();
    if (flags.json) process.stdout.write(JSON.stringify({ machine: { cores: cpus().length, node: process.version }, model }, null, 2) + '\n');
    else printRows(modelRows(model));
    rmSync(scratch, { recursive: true, force: true });
    process.exit(0);
  }
  if (flags['engine-only']) {
    const engine = await maybeMeasureEngine();
    if (flags.json) process.stdout.write(JSON.stringify({ machine: { cores: cpus().length, node: process.version }, engine }, null, 2) + '\n');
    else printRows(engineRows(engine));
    rmSync(scratch, { recursive: true, force: true });
    process.exit(engine === null ? 2 : 0);
  }
  if (flags['profile-only']) {
    const floorPerCall = await measureFloor(20_000);
    const profile = await measureEpisodeProfile({ lane, scratch, episodes: Number(flags['profile-episodes']), countCalls: toolCalls });
    if (flags.json) process.stdout.write(JSON.stringify({ machine: { cores: cpus().length, node: process.version }, floor_microseconds_per_call: floorPerCall * 1e6, profile }, null, 2) + '\n');
    else process.stdout.write(formatEpisodeProfile(profile, floorPerCall));
    rmSync(scratch, { recursive: true, force: true });
    process.exit(0);
  }
  if (flags['columnar-only']) {
    const out = join(scratch, 'columnar');
    const summary = await generateDataset({ lane, outDir: out, seeds: seedsFor(Number(flags['speed-episodes'])), formats: ['jsonl'] });
    log(`columnar: ${summary.written} records of ${lane.name} ...`);
    const columnar = await measureColumnar(join(out, 'episodes.jsonl'), summary.written);
    if (flags.json) process.stdout.write(JSON.stringify({ machine: { cores: cpus().length, node: process.version }, columnar }, null, 2) + '\n');
    else printRows(columnarRows(columnar));
    rmSync(scratch, { recursive: true, force: true });
    process.exit(0);
  }
  if (flags['ceiling-only']) {
    const speedEpisodes = Number(flags['speed-episodes']);
    const one = await measureFactory(speedEpisodes, 1);
    const many = await measureFactory(speedEpisodes, workers);
    const ceiling = await measureCeiling(speedEpisodes);
    const speedup = one.seconds / many.seconds;
    if (flags.json) process.stdout.write(JSON.stringify({ machine: { cores: cpus().length, node: process.version }, one, many, speedup, ceiling }, null, 2) + '\n');
    else printRows([[`speed-up, 1 → ${many.workers} workers`, `${speedup.toFixed(2)}×`, '≥ 1.7×', verdict(speedup >= 1.7)], ...ceilingRows(ceiling, speedup)]);
    rmSync(scratch, { recursive: true, force: true });
    process.exit(0);
  }
  if (flags['synthesis-only']) {
    const synthesis = await measureSynthesis(scratch, Number(flags['synthesis-episodes']), log);
    if (flags.json) process.stdout.write(JSON.stringify({ machine: { cores: cpus().length, node: process.version }, synthesis }, null, 2) + '\n');
    else printRows(synthesisRows(synthesis));
    rmSync(scratch, { recursive: true, force: true });
    process.exit(0);
  }
  if (flags.scale) {
    const scale = await measureScale(scratch, Number(flags['scale-episodes']), workers, log);
    if (flags.json) process.stdout.write(JSON.stringify({ machine: { cores: cpus().length, node: process.version }, scale }, null, 2) + '\n');
    else printRows(scaleRows(scale));
    rmSync(scratch, { recursive: true, force: true });
    process.exit(0);
  }
  if (flags['env-only']) {
    const env = await measureEnvSection();
    if (flags.json) process.stdout.write(JSON.stringify({ machine: { cores: cpus().length, node: process.version }, env }, null, 2) + '\n');
    else printRows(envRows(env));
    rmSync(scratch, { recursive: true, force: true });
    process.exit(0);
  }
  const speedEpisodes = Number(flags['speed-episodes']);
  const bigEpisodes = Number(flags.episodes);
  log(`${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}, lane ${lane.name}`);
  log('floor: bare SDK callTool over InMemoryTransport ...');
  const floor = await measureFloor(20_000);
  log(`floor: ${(floor * 1e6).toFixed(1)} µs per call`);
  log(`factory, 1 worker, ${speedEpisodes} episodes ...`);
  const one = await measureFactory(speedEpisodes, 1);
  log(`factory, ${workers} workers, ${speedEpisodes} episodes ...`);
  const many = await measureFactory(speedEpisodes, workers);
  const perCall = one.seconds / one.calls;
  log(`the machine's ceiling: one single-thread run of ${speedEpisodes} episodes alone, then two at once in separate processes ...`);
  const ceiling = await measureCeiling(speedEpisodes);
  log(`big run: ${bigEpisodes} episodes with ${workers} workers, in a child process for its peak RSS ...`);
  const bigOut = join(scratch, 'big');
  const seeds = seedsFor(bigEpisodes);
  const big = await runChild(['generate', lane.path, '--seeds', `${seeds.from}..${seeds.to}`, '--out', bigOut, '--workers', String(workers), '--quiet']);
  if (big.status !== 0) throw new Error(`the big run exited ${big.status}`);
  // The same command on two seeds: what the process shape (main thread, workers, their modules and heaps) costs before any scale.
  log(`the same run on 2 seeds, for the process's fixed floor of memory ...`);
  const small = await runChild(['generate', lane.path, '--seeds', '0..1', '--out', join(scratch, 'small'), '--workers', String(workers), '--quiet']);
  if (small.status !== 0) throw new Error(`the 2-seed run exited ${small.status}`);
  const bigRows = Number(JSON.parse(readFileSync(join(bigOut, 'manifest.json'), 'utf8')).counts.records);
  log('Arrow and Parquet write rates on the big run\'s episodes.jsonl ...');
  const columnar = await measureColumnar(join(bigOut, 'episodes.jsonl'), bigRows);
  log(`the HTML report of the big run${chromiumInstalled() ? ', then opened in Chromium' : ' (no Chromium: not opened)'} ...`);
  const report = await measureReport(bigOut);
  const serverEpisodes = Number(flags['server-episodes']);
  log(`server world: ${SERVER_LANE}, ${serverEpisodes} episodes with 1 worker, then ${workers} ...`);
  const spawnCost = await withFreshServers(measureConnect);
  const repointCost = await measureConnect();
  const serverFresh = await withFreshServers(() => measureServerLane(serverEpisodes, 1));
  const serverOne = await measureServerLane(serverEpisodes, 1);
  const serverMany = await measureServerLane(serverEpisodes, workers);
  const env = await measureEnvSection();
  log('model backends: policy turns against local fake servers ...');
  const model = await measureModelBackends();
  const engine = await maybeMeasureEngine();
  log(`per-phase profile: ${flags['profile-episodes']} episodes on this thread ...`);
  const profile = await measureEpisodeProfile({ lane, scratch, episodes: Number(flags['profile-episodes']), countCalls: toolCalls });

  const figures = {
    machine: { cores: cpus().length, node: process.version },
    lane: lane.name,
    floor_microseconds_per_call: floor * 1e6,
    factory_one_worker: { ...one, episodes_per_second: one.verified / one.seconds, microseconds_per_call: perCall * 1e6 },
    factory_many_workers: { ...many, episodes_per_second: many.verified / many.seconds },
    per_call_ratio: perCall / floor,
    speedup: one.seconds / many.seconds,
    ceiling,
    big_run: { episodes: seeds.to * tasks + tasks, records: bigRows, workers, peak_rss_mb: big.max_rss_bytes / 1e6, wall_seconds: big.wall_seconds },
    /** The same command on 2 seeds: the memory the process shape costs before any scale. */
    small_run: { episodes: 2 * tasks, workers, peak_rss_mb: small.max_rss_bytes / 1e6 },
    columnar,
    report,
    env,
    model,
    engine,
    profile,
    server_world: { lane: SERVER_LANE, spawn: spawnCost, repoint: repointCost, fresh_one_worker: serverFresh, one_worker: serverOne, many_workers: serverMany, speedup: serverOne.seconds / serverMany.seconds, scripted_over_server_one_worker: one.verified / one.seconds / serverOne.episodes_per_second },
  };
  if (flags.json) {
    process.stdout.write(JSON.stringify(figures, null, 2) + '\n');
  } else {
    const rows: [string, string, string, string][] = [
      ['floor: SDK callTool round trip', `${figures.floor_microseconds_per_call.toFixed(1)} µs`, '', ''],
      [`factory, 1 worker: verified episodes/s`, `${figures.factory_one_worker.episodes_per_second.toFixed(1)}`, '', ''],
      [`factory, ${many.workers} workers: verified episodes/s`, `${figures.factory_many_workers.episodes_per_second.toFixed(1)}`, '', ''],
      ['factory cost per tool call (gen + replay)', `${figures.factory_one_worker.microseconds_per_call.toFixed(1)} µs`, '', ''],
      ['per-call ratio, factory / floor (1 worker)', figures.per_call_ratio.toFixed(2), '≤ 6', verdict(figures.per_call_ratio <= 6)],
      [`speed-up, 1 → ${many.workers} workers`, `${figures.speedup.toFixed(2)}×`, '≥ 1.7×', verdict(figures.speedup >= 1.7)],
      ...ceilingRows(ceiling, figures.speedup),
      [`peak RSS, ${figures.big_run.episodes} episodes`, `${figures.big_run.peak_rss_mb.toFixed(0)} MB`, bigEpisodes >= 100_000 ? '< 300 MB' : '< 300 MB at 100,000', verdict(figures.big_run.peak_rss_mb < 300)],
      ['  its wall time', `${figures.big_run.wall_seconds.toFixed(1)} s`, '', ''],
      [`  the same run on ${figures.small_run.episodes} episodes (the fixed floor)`, `${figures.small_run.peak_rss_mb.toFixed(0)} MB`, '', ''],
      ...columnarRows(columnar),
      [`report of ${bigRows} records: write, peak RSS`, `${report.wall_seconds.toFixed(1)} s, ${report.peak_rss_mb.toFixed(0)} MB`, '', ''],
      [`  its size (${Math.min(bigRows, DEFAULT_MAX_EPISODES)} episodes embedded)`, mb(report.html_bytes), '', ''],
      [
        '  in Chromium: painted / list usable / all read',
        report.browser ? `${report.browser.first_paint_ms.toFixed(0)} / ${report.browser.ready_ms.toFixed(0)} / ${report.browser.parsed_ms.toFixed(0)} ms` : 'not measured: no Chromium',
        '',
        '',
      ],
      ['  then open an episode', report.browser ? `${report.browser.open_episode_ms.toFixed(0)} ms` : '', '', ''],
      [`server world ${SERVER_LANE}: connect, new child (median of 10)`, `${spawnCost.median_ms.toFixed(1)} ms (${spawnCost.min_ms.toFixed(1)}–${spawnCost.max_ms.toFixed(1)})`, '', ''],
      [`  connect, kept child re-pointed (median of 10)`, `${repointCost.median_ms.toFixed(1)} ms (${repointCost.min_ms.toFixed(1)}–${repointCost.max_ms.toFixed(1)})`, '', ''],
      [`  1 worker, a child per connection: verified episodes/s`, serverFresh.episodes_per_second.toFixed(2), '', ''],
      [`  1 worker, kept child: verified episodes/s`, `${serverOne.episodes_per_second.toFixed(2)} (scripted lane: ${figures.factory_one_worker.episodes_per_second.toFixed(1)}, ${figures.server_world.scripted_over_server_one_worker.toFixed(1)}× more)`, '', ''],
      [`  ${serverMany.workers} workers, kept children: verified episodes/s`, `${serverMany.episodes_per_second.toFixed(2)} (speed-up ${figures.server_world.speedup.toFixed(2)}×)`, '', ''],
    ];
    rows.push(...envRows(env), ...modelRows(model), ...engineRows(engine));
    printRows(rows);
    process.stdout.write('\n' + formatEpisodeProfile(profile, floor));
    if (rows.some((row) => row[3] === 'NOT YET')) {
      process.stdout.write('\nTargets marked NOT YET: why, and what comes next, is in docs/scaling.md, section Benchmark.\n');
    }
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

function verdict(met: boolean): string {
  return met ? 'yes' : 'NOT YET';
}

function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}
