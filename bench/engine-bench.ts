// Owns the engine figures of `npm run bench`: what a model turn costs through
// the project's own engine (`episode-factory engine`, llama.cpp through
// node-llama-cpp on one CPU thread) with the tiny model scripts/tiny-model.sh
// trains. One turn is tool-world-v1's first request (system prompt, user
// request, nine tools: about 2,000 tokens) over Ollama's /api/chat, whole:
//   - cold: the KV cache holds another conversation, so the whole prompt is
//     evaluated, as for an episode's first turn;
//   - warm: the same request again, so the cached prefix is reused, as for
//     every later turn of an episode (only its new tokens are evaluated);
// with the engine's own timings (prompt evaluation, decoding) beside the
// wall time the client sees, so what is left is the engine's and HTTP's
// overhead. Then whole episodes: `generate --policy ollama:tiny-qwen2` on 10
// episodes, verified, per episode and per model turn. Medians of interleaved
// turns, in one run. Also runnable alone: `node --import tsx bench/engine-bench.ts`.

import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { TINY_MODEL_CURRENT, tinyModelPath } from '../src/cli/engine-command.js';
import { startEngine } from '../src/engine/engine-server.js';
import { generateDataset } from '../src/generation/generate-dataset.js';
import { parsePolicySpec, preparePolicy } from '../src/selection/policy-selection.js';
import { loadLane } from '../src/lanes/lane-loader.js';

const REPO = new URL('..', import.meta.url).pathname;

export interface TurnTimings {
  /** What the client waited, request sent to body read. */
  wall_ms: number;
  /** The engine's own total_duration. */
  engine_ms: number;
  prompt_tokens_evaluated: number;
  prompt_eval_ms: number;
  output_tokens: number;
  eval_ms: number;
}

export interface EngineFigures {
  model: { file: string; bytes: number; digest: string; parameters: number; architecture: string };
  turns: number;
  prompt_tokens: number;
  cold: TurnTimings;
  warm: TurnTimings;
  decode_tokens_per_second: number;
  prompt_tokens_per_second: number;
  /** engine total minus prompt evaluation and decoding: rendering, tokenising, parsing, sampling set-up. */
  engine_overhead_ms: number;
  /** Client wall minus the engine's total: HTTP and JSON. */
  http_overhead_ms: number;
  generate: { episodes: number; model_turns: number; wall_seconds: number; episodes_per_second: number; ms_per_model_turn: number; completed: number };
}

/** Whether the tiny model is built (the bench measures the engine only then). */
export function tinyModelBuilt(): boolean {
  return process.env.EPISODE_FACTORY_TINY_MODEL !== undefined || existsSync(TINY_MODEL_CURRENT);
}

function median(values: number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function medianTimings(turns: TurnTimings[]): TurnTimings {
  const pick = (key: keyof TurnTimings) => median(turns.map((turn) => turn[key]));
  return { wall_ms: pick('wall_ms'), engine_ms: pick('engine_ms'), prompt_tokens_evaluated: pick('prompt_tokens_evaluated'), prompt_eval_ms: pick('prompt_eval_ms'), output_tokens: pick('output_tokens'), eval_ms: pick('eval_ms') };
}

/** tool-world-v1's first request as Ollama's /api/chat takes it. */
function firstRequest(model: string): Record<string, unknown> {
  const line = readFileSync(join(REPO, 'datasets', 'tool-world-v1', 'episodes.jsonl'), 'utf8').split('\n', 1)[0]!;
  const record = JSON.parse(line) as { tools: { name: string; description: string; input_schema: string }[]; messages: { role: string; content: string }[] };
  return {
    model,
    stream: false,
    messages: record.messages.slice(0, 2).map((message) => ({ role: message.role, content: message.content })),
    tools: record.tools.map((tool) => ({ type: 'function', function: { name: tool.name, description: tool.description, parameters: JSON.parse(tool.input_schema) } })),
    options: { temperature: 0, seed: 1, num_predict: 128 },
  };
}

async function chat(url: string, body: unknown): Promise<TurnTimings> {
  const started = performance.now();
  const response = await fetch(`${url}/api/chat`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const answer = (await response.json()) as Record<string, number>;
  const wall = performance.now() - started;
  if (!response.ok) throw new Error(`the engine answered ${response.status}: ${JSON.stringify(answer)}`);
  return {
    wall_ms: wall,
    engine_ms: answer.total_duration! / 1e6,
    prompt_tokens_evaluated: answer.prompt_eval_count!,
    prompt_eval_ms: answer.prompt_eval_duration! / 1e6,
    output_tokens: answer.eval_count!,
    eval_ms: answer.eval_duration! / 1e6,
  };
}

export async function measureEngine(turns = 15): Promise<EngineFigures> {
  const modelPath = tinyModelPath();
  const engine = await startEngine({ modelPath, name: 'tiny-qwen2:latest', version: 'episode-factory-engine bench' });
  const scratch = mkdtempSync(join(tmpdir(), 'ef-engine-bench-'));
  try {
    const { description } = engine.served.model;
    const request = firstRequest('tiny-qwen2');
    // Another conversation: after it, the next request shares only the chat template's first tokens with the cache.
    const other = { model: 'tiny-qwen2', stream: false, messages: [{ role: 'user', content: 'Say hello.' }], options: { temperature: 0, seed: 1, num_predict: 8 } };
    await chat(engine.url, request);
    const cold: TurnTimings[] = [];
    const warm: TurnTimings[] = [];
    for (let index = 0; index < turns; index++) {
      await chat(engine.url, other);
      cold.push(await chat(engine.url, request));
      warm.push(await chat(engine.url, request));
    }
    const all = [...cold, ...warm];
    const coldMedian = medianTimings(cold);

    const lane = loadLane('tool-world-v1', REPO);
    const policy = await preparePolicy(lane, parsePolicySpec('ollama:tiny-qwen2'), { host: engine.url });
    const started = performance.now();
    const summary = await generateDataset({ lane, outDir: join(scratch, 'generated'), seeds: { from: 0, to: 1 }, policy, concurrency: 1, formats: ['jsonl'] });
    const wallSeconds = (performance.now() - started) / 1000;
    const records = readFileSync(join(scratch, 'generated', 'episodes.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { messages: { role: string }[] });
    const modelTurns = records.reduce((sum, record) => sum + record.messages.filter((message) => message.role === 'assistant').length, 0);

    return {
      model: { file: modelPath, bytes: description.bytes, digest: description.sha256, parameters: description.parameters, architecture: description.architecture },
      turns,
      prompt_tokens: coldMedian.prompt_tokens_evaluated,
      cold: coldMedian,
      warm: medianTimings(warm),
      decode_tokens_per_second: median(all.filter((turn) => turn.output_tokens > 0).map((turn) => turn.output_tokens / (turn.eval_ms / 1000))),
      prompt_tokens_per_second: median(cold.map((turn) => turn.prompt_tokens_evaluated / (turn.prompt_eval_ms / 1000))),
      engine_overhead_ms: median(all.map((turn) => turn.engine_ms - turn.prompt_eval_ms - turn.eval_ms)),
      http_overhead_ms: median(all.map((turn) => turn.wall_ms - turn.engine_ms)),
      generate: { episodes: summary.episodes, model_turns: modelTurns, wall_seconds: wallSeconds, episodes_per_second: summary.episodes / wallSeconds, ms_per_model_turn: (wallSeconds * 1000) / modelTurns, completed: summary.completed },
    };
  } finally {
    await engine.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.stdout.write(JSON.stringify(await measureEngine(), null, 2) + '\n');
}
