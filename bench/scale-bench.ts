// The bench's section on dataset scale (`npm run bench -- --scale`):
// tool-world-v1 generated at a small and a big size (25,000 and 250,000
// episodes by default), then every dataset command run on
// each in a child process for its peak RSS (the whole process, as
// /usr/bin/time's %M) and its wall time: replay, audit, dedup, stats, export
// sft and dpo, report, split and card. Each command must stay within 600 MB
// at the big size, and within 1.25× its own figure at the small one: memory
// that does not grow with the records. Both sizes are measured in this one
// run, so the ratio holds on a noisy machine. tool-world-v1, not the DPO lane:
// its episodes are bound by CPU, where the DPO lane's faults make them wait on
// timeouts (seven an episode a second per thread), which would take a 250,000
// episode run to hours; its task and seed groups are single records, so
// `export dpo` makes its grouping pass and reads none back (a group is read
// back one at a time, which does not grow with the dataset either).

import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { loadLane } from '../src/lanes/lane-loader.js';
import { recordBytes } from '../src/records/record-files.js';
import { type PeakRun, runPeakRss } from './peak-rss-child.js';

const REPO = new URL('../', import.meta.url).pathname;
export const SCALE_LANE = 'tool-world-v1';
export const RSS_LIMIT_MB = 600;
export const GROWTH_LIMIT = 1.25;

export interface ScaleRun {
  command: string;
  small: PeakRun;
  big: PeakRun;
}

export interface ScaleFigures {
  lane: string;
  episodes: { small: number; big: number };
  /** The bytes of the big dataset's JSONL records (episodes.jsonl, or its data/ files). */
  big_jsonl_bytes: number;
  generate: { small: PeakRun; big: PeakRun; workers: number };
  commands: ScaleRun[];
  /** `replay` of the small dataset on one thread and on `workers`, one after the other. */
  replay_threads: { one: PeakRun; many: PeakRun; workers: number };
}

/** The dataset commands, each as it is run on a dataset directory `dir` (with scratch space `out`). */
const COMMANDS: { name: string; args: (dir: string, out: string) => string[] }[] = [
  { name: 'stats', args: (dir) => ['stats', dir, '--json'] },
  { name: 'replay', args: (dir) => ['replay', dir, '--json', '--quiet'] },
  { name: 'audit', args: (dir) => ['audit', dir, '--json'] },
  { name: 'dedup', args: (dir, out) => ['dedup', dir, '--out', join(out, 'dedup'), '--json'] },
  { name: 'export sft', args: (dir, out) => ['export', 'sft', dir, '--out', join(out, 'sft.jsonl'), '--json'] },
  { name: 'export dpo', args: (dir, out) => ['export', 'dpo', dir, '--out', join(out, 'dpo.jsonl'), '--json'] },
  { name: 'report', args: (dir, out) => ['report', dir, '--out', join(out, 'report.html'), '--json'] },
  // These two write into the dataset: run last.
  { name: 'split', args: (dir) => ['split', dir, '--test', '0.1', '--json'] },
  { name: 'card', args: (dir) => ['card', dir, '--license', 'mit', '--json'] },
];

const figure = (run: PeakRun) => `${Math.round(run.max_rss_bytes / 1e6)} MB, ${run.wall_seconds.toFixed(1)} s`;

async function runOn(dir: string, out: string, log: (message: string) => void, label: string): Promise<Map<string, PeakRun>> {
  const runs = new Map<string, PeakRun>();
  for (const command of COMMANDS) {
    log(`scale: ${command.name} on ${label} ...`);
    const run = await runPeakRss(command.args(dir, out));
    // replay, audit and export dpo may exit 1 for what they find; anything else is the bench's failure.
    if (run.status !== 0 && run.status !== 1) throw new Error(`${command.name} on ${dir} exited ${run.status}`);
    // Each figure as it is measured: a run of an hour that fails late still says what it found.
    log(`scale: ${command.name} on ${label}: ${figure(run)}`);
    runs.set(command.name, run);
  }
  return runs;
}

export async function measureScale(scratch: string, bigEpisodes: number, workers: number, log: (message: string) => void): Promise<ScaleFigures> {
  const lane = loadLane(SCALE_LANE, REPO);
  // A lane whose policy draws one variant per seed runs each task once a seed; one that runs "each" variant, once per variant.
  const policy = lane.document.policy as { variants?: Record<string, number>; draw?: string };
  const perSeed = lane.document.tasks.length * (policy.draw === 'each' ? Object.keys(policy.variants ?? {}).length || 1 : 1);
  const sizes = { small: Math.round(bigEpisodes / 10), big: bigEpisodes };
  const root = join(scratch, 'scale');
  mkdirSync(root, { recursive: true });
  const generated: Partial<Record<'small' | 'big', PeakRun>> = {};
  const measured: Partial<Record<'small' | 'big', Map<string, PeakRun>>> = {};
  let bigBytes = 0;
  let replayThreads: ScaleFigures['replay_threads'] | undefined;
  for (const size of ['small', 'big'] as const) {
    const seeds = Math.max(1, Math.ceil(sizes[size] / perSeed));
    const dir = join(root, `${size}-dataset`);
    log(`scale: generate ${SCALE_LANE} --seeds 0..${seeds - 1} (${seeds * perSeed} episodes) with ${workers} workers ...`);
    generated[size] = await runPeakRss(['generate', SCALE_LANE, '--seeds', `0..${seeds - 1}`, '--workers', String(workers), '--out', dir, '--json', '--quiet']);
    if (generated[size]!.status !== 0) throw new Error(`generate exited ${generated[size]!.status}`);
    sizes[size] = seeds * perSeed;
    log(`scale: generate ${sizes[size]} episodes: ${figure(generated[size]!)}`);
    // One episodes.jsonl, or data/ files past the size bound (250,000 records are about ten).
    if (size === 'big') bigBytes = recordBytes(dir);
    if (size === 'small') {
      log(`scale: replay on 1 thread, then on ${workers} ...`);
      replayThreads = { one: await runPeakRss(['replay', dir, '--json', '--workers', '1']), many: await runPeakRss(['replay', dir, '--json', '--workers', String(workers)]), workers };
      log(`scale: replay on 1 thread ${figure(replayThreads.one)}, on ${workers} ${figure(replayThreads.many)}`);
    }
    // split and card, which write into the dataset, run last on it: the dataset is removed after.
    measured[size] = await runOn(dir, join(root, `${size}-out`), log, `${sizes[size]} records`);
    rmSync(join(root, `${size}-out`), { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    lane: SCALE_LANE,
    episodes: sizes,
    big_jsonl_bytes: bigBytes,
    generate: { small: generated.small!, big: generated.big!, workers },
    commands: COMMANDS.map(({ name }) => ({ command: name, small: measured.small!.get(name)!, big: measured.big!.get(name)! })),
    replay_threads: replayThreads!,
  };
}

const megabytes = (run: PeakRun) => run.max_rss_bytes / 1e6;

export function scaleRows(figures: ScaleFigures): [string, string, string, string][] {
  const { small, big } = figures.episodes;
  const rows: [string, string, string, string][] = [];
  const row = (name: string, runs: { small: PeakRun; big: PeakRun }, growthTarget: boolean) => {
    const growth = megabytes(runs.big) / megabytes(runs.small);
    const within = megabytes(runs.big) <= RSS_LIMIT_MB && (!growthTarget || growth <= GROWTH_LIMIT);
    rows.push([
      `scale: ${name}, peak RSS at ${big.toLocaleString('en-US')} (and ${small.toLocaleString('en-US')}) records`,
      `${megabytes(runs.big).toFixed(0)} MB (${megabytes(runs.small).toFixed(0)} MB, ×${growth.toFixed(2)}), ${runs.big.wall_seconds.toFixed(0)} s`,
      growthTarget ? `≤ ${RSS_LIMIT_MB} MB and ≤ ${GROWTH_LIMIT}×` : `≤ ${RSS_LIMIT_MB} MB`,
      within ? 'yes' : 'NOT YET',
    ]);
  };
  row(`generate (${figures.generate.workers} workers)`, figures.generate, false);
  for (const run of figures.commands) row(run.command, run, true);
  rows.push([`  the big dataset's JSONL records`, `${(figures.big_jsonl_bytes / 1e9).toFixed(2)} GB`, '', '']);
  const threads = figures.replay_threads;
  const speedup = threads.one.wall_seconds / threads.many.wall_seconds;
  rows.push([
    `scale: replay of ${small.toLocaleString('en-US')} records, ${threads.workers} threads vs 1`,
    `${speedup.toFixed(2)}× (${threads.one.wall_seconds.toFixed(0)} s → ${threads.many.wall_seconds.toFixed(0)} s)`,
    '≥ 1.6×',
    speedup >= 1.6 ? 'yes' : 'NOT YET',
  ]);
  return rows;
}
