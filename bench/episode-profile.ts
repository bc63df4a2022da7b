// The bench's per-phase profile of an episode (section 9, and alone with
// `npm run bench -- --profile-only`): a real generate run (generateDataset,
// one worker, on this thread, one episode at a time, JSONL + Arrow + Parquet)
// with the phase hooks of src/core/phase-profile.ts turned on, printed as
// milliseconds per episode and shares of the total, so the next bottleneck is
// visible without a profiler. Only this file reads the clock for the profile;
// the hooks keep its readings to themselves.

import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { generateDataset } from '../src/generation/generate-dataset.js';
import type { Lane } from '../src/lanes/lane.js';
import { PROFILE_PHASES, startProfile, stopProfile, type PhaseProfile, type ProfilePhase } from '../src/core/phase-profile.js';

const LABELS: Record<ProfilePhase, string> = {
  world_init: 'world init (seeded state, initial snapshot)',
  connection: 'connection (lease or handshake, tools/list, close)',
  tool_calls: 'agent loop: policy turns, tool calls',
  snapshot: 'final snapshot',
  snapshot_hash: 'snapshot hashing',
  predicates: 'predicates and evidence checks',
  record_assembly: 'record assembly',
  validation: 'record validation (schema)',
  serialisation: 'serialisation (stringify / parse)',
  replay_compare: 'replay: compare rebuilt with stored',
  writing: 'writing (trace, part files)',
  columnar: "columnar: the part's Arrow columns",
  replay: 'replay: own work (actions, checks)',
  episode: 'episode: task, trace events, rest',
  part: 'between episodes (yield to the event loop)',
  other: 'outside parts (plan, joining parts, Arrow/Parquet, manifest)',
};

export interface EpisodeProfile {
  episodes: number;
  written: number;
  wall_seconds: number;
  tool_calls: number;
  tangled: boolean;
  phases: { phase: ProfilePhase; label: string; generate_ms: number; replay_ms: number; ms_per_episode: number; share: number }[];
}

export async function measureEpisodeProfile(options: { lane: Lane; scratch: string; episodes: number; countCalls: (dir: string) => Promise<number> }): Promise<EpisodeProfile> {
  const { lane, scratch } = options;
  const tasks = lane.document.tasks.length;
  const seeds = { from: 0, to: Math.max(1, Math.ceil(options.episodes / tasks)) - 1 };
  // A short run first, unprofiled, so the profile sees warm code and compiled schemas.
  const warm = join(scratch, 'profile-warm');
  await generateDataset({ lane, outDir: warm, seeds: { from: 0, to: 0 }, workers: 1, formats: ['jsonl'] });
  rmSync(warm, { recursive: true, force: true });
  const out = join(scratch, 'profile');
  startProfile(() => performance.now());
  let profile: PhaseProfile;
  let summary;
  try {
    summary = await generateDataset({ lane, outDir: out, seeds, workers: 1, formats: ['jsonl', 'arrow', 'parquet'] });
  } finally {
    profile = stopProfile();
  }
  const calls = (await options.countCalls(out)) * 2;
  rmSync(out, { recursive: true, force: true });
  const episodes = summary.episodes;
  const total = PROFILE_PHASES.reduce((sum, phase) => sum + profile.generate[phase] + profile.replay[phase], 0);
  return {
    episodes,
    written: summary.written,
    wall_seconds: summary.wall_seconds,
    tool_calls: calls,
    tangled: profile.tangled,
    phases: PROFILE_PHASES.map((phase) => ({
      phase,
      label: LABELS[phase],
      generate_ms: profile.generate[phase] / episodes,
      replay_ms: profile.replay[phase] / episodes,
      ms_per_episode: (profile.generate[phase] + profile.replay[phase]) / episodes,
      share: (profile.generate[phase] + profile.replay[phase]) / total,
    })),
  };
}

export function formatEpisodeProfile(profile: EpisodeProfile, floorSecondsPerCall?: number): string {
  const rows = [...profile.phases].sort((left, right) => right.share - left.share);
  const total = rows.reduce((sum, row) => sum + row.ms_per_episode, 0);
  const width = Math.max(...rows.map((row) => row.label.length), 'phase'.length);
  const cell = (text: string, size: number) => text.padStart(size);
  const lines = [
    `Per-phase profile: ${profile.episodes} episodes, 1 worker on this thread, one at a time (${profile.written} written, ${profile.tool_calls} tool calls with replay)`,
    `${'phase'.padEnd(width)}  ${cell('generate', 9)}  ${cell('replay', 9)}  ${cell('ms/episode', 10)}  ${cell('share', 6)}`,
  ];
  for (const row of rows) {
    lines.push(
      `${row.label.padEnd(width)}  ${cell(row.generate_ms.toFixed(3), 9)}  ${cell(row.replay_ms.toFixed(3), 9)}  ${cell(row.ms_per_episode.toFixed(3), 10)}  ${cell((row.share * 100).toFixed(1) + '%', 6)}`,
    );
  }
  lines.push(`${'total'.padEnd(width)}  ${cell('', 9)}  ${cell('', 9)}  ${cell(total.toFixed(3), 10)}  ${cell('100%', 6)}`);
  const perCall = (profile.wall_seconds / profile.tool_calls) * 1e6;
  lines.push(`episodes/s ${(profile.written / profile.wall_seconds).toFixed(1)}; ${perCall.toFixed(1)} µs per tool call (gen + replay)` + (floorSecondsPerCall ? `, ${(perCall / (floorSecondsPerCall * 1e6)).toFixed(2)}× the SDK floor` : ''));
  lines.push(
    'note: the yield between episodes is where work deferred by the episodes runs (dropping it does not shorten the run); ' +
      'a phase that allocates (snapshot hashing) also carries the garbage collections it triggers',
  );
  if (profile.tangled) lines.push('warning: the phase hooks did not nest (episodes overlapped); the split is unreliable');
  return lines.join('\n') + '\n';
}
