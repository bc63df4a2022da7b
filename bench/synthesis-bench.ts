// The bench's section on task synthesis (`npm run bench -- --synthesis-only`,
// also at the end of a full run): for a few worlds, `lanes synthesize
// --count 100` through the real command (the time to keep and prove 100
// tasks, the share of candidates kept, the reasons for the rest); the
// distinct sound tasks in lanes/; and the near-duplicate share `dedup`
// finds in episodes drawn from a synthesised lane beside the same number
// drawn from tool-world-v1, both measured in this one run.

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { canonicalJson } from '../src/core/canonical-json.js';
import { childEnvironment } from '../src/core/child-environment.js';
import { SYNTHESIZED_LANES } from '../src/lanes/lane-loader.js';
import type { JsonValue } from '../src/core/json-value.js';

const REPO = new URL('../', import.meta.url).pathname;
const CLI = join(REPO, 'bin', 'episode-factory.js');

export interface SynthesisRun {
  world: string;
  kind: 'scripted' | 'server';
  kept: number;
  candidates: number;
  seconds: number;
  rejected: Record<string, number>;
}

export interface SynthesisFigures {
  runs: SynthesisRun[];
  /** Distinct (world, solution, predicates) among the tasks of every lane in lanes/. */
  distinct_tasks_in_lanes: number;
  /** Distinct tasks of the shipped synthesised lanes (lanes/synthesized/), by world. */
  synthesised_by_world: Record<string, number>;
  /** `lanes check` over every shipped synthesised lane, every task, each lane's first seeds. */
  shipped_proof: { tasks: number; unsound: number; seconds: number };
  near_duplicates: { episodes: number; synthesised: { lane: string; share: number }; hand_written: { lane: string; share: number } };
}

const WORLDS: [string, SynthesisRun['kind']][] = [
  ['memory-server', 'server'],
  ['filesystem-server', 'server'],
  ['issues', 'scripted'],
  ['tasks', 'scripted'],
];

function run(cwd: string, ...args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd, env: childEnvironment(process.env).env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (status) => resolve({ status: status ?? 1, stdout, stderr }));
  });
}

const SYNTHESIZED = join(REPO, 'lanes', SYNTHESIZED_LANES);

function laneFiles(directory: string): string[] {
  return existsSync(directory) ? readdirSync(directory).filter((name) => name.endsWith('.json') && !name.endsWith('.writer.json')).map((name) => join(directory, name)) : [];
}

/** Distinct (world, solution, predicates) in lanes/ and lanes/synthesized/, and how many of them each world has in the latter. */
export function distinctTasksInLanes(directory = join(REPO, 'lanes')): { all: number; synthesised: Record<string, number> } {
  const seen = new Set<string>();
  const synthesised: Record<string, Set<string>> = {};
  for (const path of [...laneFiles(directory), ...laneFiles(join(directory, SYNTHESIZED_LANES))]) {
    const lane = JSON.parse(readFileSync(path, 'utf8')) as { world: { name: string }; tasks: { solution: JsonValue; predicates: { id: string }[] }[] };
    for (const task of lane.tasks) {
      const predicates = task.predicates.map(({ id: _id, ...rest }) => rest) as JsonValue;
      const key = canonicalJson({ world: lane.world.name, solution: task.solution, predicates });
      seen.add(key);
      if (path.startsWith(join(directory, SYNTHESIZED_LANES))) (synthesised[lane.world.name] ??= new Set()).add(key);
    }
  }
  return { all: seen.size, synthesised: Object.fromEntries(Object.entries(synthesised).map(([world, keys]) => [world, keys.size])) };
}

async function nearShare(cwd: string, lane: string, tasks: number, episodes: number, log: (message: string) => void, label = lane): Promise<number> {
  const seeds = `0..${Math.max(1, Math.ceil(episodes / tasks)) - 1}`;
  const out = join(cwd, 'datasets', label);
  log(`synthesis: ${episodes} episodes of ${lane} (seeds ${seeds}) ...`);
  const made = await run(cwd, 'generate', lane, '--seeds', seeds, '--out', out, '--format', 'jsonl', '--json', '--quiet');
  if (made.status !== 0 && made.status !== 1) throw new Error(`generate ${lane} failed: ${made.stderr}`);
  const dedup = await run(cwd, 'dedup', out, '--out', `${out}-dedup`, '--json');
  if (dedup.status !== 0) throw new Error(`dedup ${lane} failed: ${dedup.stderr}`);
  const report = JSON.parse(dedup.stdout) as { records: number; by_reason: { exact: number; near: number } };
  return (report.by_reason.exact + report.by_reason.near) / report.records;
}

export async function measureSynthesis(scratch: string, episodes: number, log: (message: string) => void): Promise<SynthesisFigures> {
  const cwd = join(scratch, 'synthesis');
  mkdirSync(join(cwd, 'lanes'), { recursive: true });
  const runs: SynthesisRun[] = [];
  for (const [world, kind] of WORLDS) {
    log(`synthesis: lanes synthesize ${world} --count 100 ...`);
    const started = performance.now();
    const result = await run(cwd, 'lanes', 'synthesize', world, '--count', '100', '--max-candidates', '1000', '--out', `lanes/${world}-synth-v1.json`, '--json');
    const seconds = (performance.now() - started) / 1000;
    if (result.status !== 0 && result.status !== 1) throw new Error(`lanes synthesize ${world} failed: ${result.stderr}`);
    const report = JSON.parse(result.stdout) as { kept: number; candidates: number; rejected: Record<string, number> };
    runs.push({ world, kind, kept: report.kept, candidates: report.candidates, seconds, rejected: report.rejected });
  }
  // The shipped lane, not this run's: what a user generates from.
  const shipped = join(SYNTHESIZED, 'memory-server-synth-v1.json');
  const shippedTasks = (JSON.parse(readFileSync(shipped, 'utf8')) as { tasks: unknown[] }).tasks.length;
  const synthesised = await nearShare(cwd, shipped, shippedTasks, episodes, log, 'memory-server-synth-v1');
  const hand = await nearShare(cwd, 'tool-world-v1', 5, episodes, log);
  log('synthesis: lanes check over every shipped synthesised lane ...');
  const started = performance.now();
  const proof = await run(REPO, 'lanes', 'check', ...laneFiles(SYNTHESIZED), '--json');
  const report = JSON.parse(proof.stdout) as { tasks: number; unsound: number };
  const distinct = distinctTasksInLanes();
  return {
    runs,
    distinct_tasks_in_lanes: distinct.all,
    synthesised_by_world: distinct.synthesised,
    shipped_proof: { tasks: report.tasks, unsound: report.unsound, seconds: (performance.now() - started) / 1000 },
    near_duplicates: { episodes, synthesised: { lane: 'memory-server-synth-v1', share: synthesised }, hand_written: { lane: 'tool-world-v1', share: hand } },
  };
}

export function synthesisRows(figures: SynthesisFigures): [string, string, string, string][] {
  const rows: [string, string, string, string][] = [];
  for (const entry of figures.runs) {
    const done = entry.kept >= 100;
    rows.push([
      `synthesis: ${entry.world} (${entry.kind}), keep and prove 100 tasks`,
      `${entry.kept} kept of ${entry.candidates} candidates (${((100 * entry.kept) / Math.max(1, entry.candidates)).toFixed(0)}%) in ${entry.seconds.toFixed(0)} s`,
      entry.kind === 'server' ? '100 in < 300 s' : 'printed',
      entry.kind === 'server' ? (done && entry.seconds < 300 ? 'yes' : 'NOT YET') : '',
    ]);
  }
  const servers = Object.entries(figures.synthesised_by_world).filter(([world]) => !['calendar', 'files', 'issues', 'shop', 'tasks'].includes(world));
  const served = servers.filter(([, count]) => count >= 150).length;
  rows.push(['synthesis: distinct sound tasks in lanes/ (and lanes/synthesized/)', String(figures.distinct_tasks_in_lanes), '≥ 1,000', figures.distinct_tasks_in_lanes >= 1000 ? 'yes' : 'NOT YET']);
  rows.push(['  synthesised, on server worlds', servers.map(([world, count]) => `${world} ${count}`).join(', '), '≥ 150 on each of three', served >= 3 ? 'yes' : 'NOT YET']);
  const proof = figures.shipped_proof;
  rows.push(['  lanes check over every shipped synthesised task', `${proof.tasks} tasks, ${proof.unsound} unsound, ${proof.seconds.toFixed(0)} s`, 'all sound', proof.unsound === 0 ? 'yes' : 'NO']);
  const near = figures.near_duplicates;
  rows.push([`synthesis: near-duplicate share, ${near.episodes} episodes of ${near.synthesised.lane}`, `${(100 * near.synthesised.share).toFixed(1)}%`, '< 5%', near.synthesised.share < 0.05 ? 'yes' : 'NOT YET']);
  rows.push([`  the same of ${near.hand_written.lane} (hand-written, 5 tasks)`, `${(100 * near.hand_written.share).toFixed(1)}%`, '', '']);
  return rows;
}
