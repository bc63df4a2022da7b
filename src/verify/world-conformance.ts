// Owns the world conformance suite: one battery of named checks that any
// world, scripted or server, built in or brought by a user, must pass before
// its episodes can be trusted. It takes a world object, not a name, so a world
// read from a definition file is checked the same way. The checks that need a
// sandbox and a child live in sandbox-containment.ts, the fault kinds in
// fault-conformance.ts; this file holds the rest and runs them in order.

import { canonicalJson } from '../core/canonical-json.js';
import { errorMessage } from '../core/errors.js';
import type { Lane } from '../lanes/lane.js';
import { listLaneFiles, loadLane } from '../lanes/lane-loader.js';
import type { EpisodeRecord } from '../records/episode-record.js';
import { toMcpTool } from '../world/mcp-server-binding.js';
import { isServerWorld, type AnyWorld } from '../world/server-world.js';
import { findWorld } from '../world/world-registry.js';
import { checkFaultKinds } from './fault-conformance.js';
import { check, DEFAULT_PINNED_DATE, listEveryTool, openSeeded, type ConformanceCheck, type ConformanceContext } from './conformance-session.js';
import { produceLaneEpisodes, type LaneEpisode } from './conformance-episodes.js';
import { replayRecord } from './replay.js';
import { checkNoLeftovers, checkSandboxContainment } from './sandbox-containment.js';

export type { ConformanceCheck, CheckStatus } from './conformance-session.js';

export interface ConformanceReport {
  world: string;
  kind: 'scripted' | 'server';
  checks: ConformanceCheck[];
  /** No check failed (skips are allowed). */
  passed: boolean;
}

export interface ConformanceOptions {
  /** The lanes to look for one naming this world; every lane file found from the working directory when absent. */
  lanes?: readonly Lane[];
  /** Only these checks, by id (seed, probe, catalog, sandbox, cleanup, faults, replay); all when absent. */
  only?: readonly string[];
  /** Called as each check ends, for progress. */
  onCheck?: (check: ConformanceCheck) => void;
}

export const CHECK_IDS = ['seed', 'probe', 'catalog', 'sandbox', 'cleanup', 'faults', 'replay'] as const;

/** The lanes of lanes/ that load; a broken lane is `lanes check`'s to report, not this suite's. */
export function loadableLanes(): Lane[] {
  return listLaneFiles().flatMap((path) => {
    try {
      return [loadLane(path)];
    } catch {
      return [];
    }
  });
}

/** The lane a world's episode is drawn from: one named after the world first, then any, by name. */
export function laneFor(world: AnyWorld, lanes: readonly Lane[]): Lane | undefined {
  const using = lanes.filter((lane) => lane.document.world.name === world.name).sort((a, b) => a.name.localeCompare(b.name));
  return using.find((lane) => lane.name === `${world.name}-v1`) ?? using.find((lane) => lane.name.startsWith(world.name)) ?? using[0];
}

export async function checkWorldConformance(world: AnyWorld, options: ConformanceOptions = {}): Promise<ConformanceReport> {
  const lane = laneFor(world, options.lanes ?? loadableLanes());
  const noEpisode = episodeSkipReason(world, lane);
  let episodes: Promise<LaneEpisode[]> | undefined;
  const context: ConformanceContext = {
    world,
    config: lane?.document.world.config ?? {},
    pinnedDate: lane?.document.produced_at ?? DEFAULT_PINNED_DATE,
    lane,
    noEpisode,
    episodes: () => (episodes ??= lane && noEpisode === undefined ? produceLaneEpisodes(lane) : Promise.resolve([])),
  };
  const steps: Array<[id: (typeof CHECK_IDS)[number], title: string, run: (context: ConformanceContext) => Promise<Omit<ConformanceCheck, 'id' | 'title'>>]> = [
    ['seed', 'same seed, same initial snapshot; another seed, another', checkSeedDeterminism],
    ['probe', 'two snapshots of an untouched world are equal', checkProbeStability],
    ['catalog', 'the live tools/list is the declared catalog', checkCatalog],
    ['sandbox', 'calls aimed outside the sandbox change and read nothing outside', checkSandboxContainment],
    ['cleanup', 'no process and no sandbox left after dispose', checkNoLeftovers],
    ['faults', 'every fault kind fires in front of it', checkFaultKinds],
    ['replay', "a scripted episode replays byte-identical", checkScriptedReplay],
  ];
  const checks: ConformanceCheck[] = [];
  for (const [id, title, run] of steps) {
    if (options.only && !options.only.includes(id)) continue;
    let outcome: Omit<ConformanceCheck, 'id' | 'title'>;
    try {
      outcome = await run(context);
    } catch (error) {
      outcome = { status: 'fail', detail: `the check could not run: ${errorMessage(error)}` };
    }
    const done = check(id, title, outcome.status, outcome.detail);
    checks.push(done);
    options.onCheck?.(done);
  }
  return { world: world.name, kind: isServerWorld(world) ? 'server' : 'scripted', checks, passed: checks.every((entry) => entry.status !== 'fail') };
}

type Outcome = Omit<ConformanceCheck, 'id' | 'title'>;

async function initialSnapshotText(context: ConformanceContext, seed: number): Promise<string> {
  const session = await openSeeded(context, seed);
  try {
    return canonicalJson(session.initialSnapshot);
  } finally {
    await session.dispose();
  }
}

async function checkSeedDeterminism(context: ConformanceContext): Promise<Outcome> {
  const first = await initialSnapshotText(context, 0);
  const again = await initialSnapshotText(context, 0);
  const other = await initialSnapshotText(context, 1);
  if (first !== again) return { status: 'fail', detail: `seed 0 gave two different initial snapshots (${first.length} and ${again.length} bytes): ${firstDifference(first, again)}` };
  if (first === other) return { status: 'fail', detail: 'seeds 0 and 1 gave the same initial snapshot: the world does not draw from its random stream' };
  return { status: 'pass', detail: `seed 0 twice: ${first.length} identical bytes; seed 1 differs` };
}

async function checkProbeStability(context: ConformanceContext): Promise<Outcome> {
  const session = await openSeeded(context, 0);
  try {
    const initial = canonicalJson(session.initialSnapshot);
    const untouched = canonicalJson(await session.finalSnapshot());
    if (initial !== untouched) return { status: 'fail', detail: `the final snapshot of a world nobody touched differs from its initial one: ${firstDifference(initial, untouched)}` };
    // A connection that only lists tools must not change the state either (a server that writes on start-up would).
    const connection = await session.connect({});
    try {
      await listEveryTool(connection);
    } finally {
      await connection.close();
    }
    const listed = canonicalJson(await session.finalSnapshot());
    if (initial !== listed) return { status: 'fail', detail: `connecting and listing the tools changed the snapshot: ${firstDifference(initial, listed)}` };
    return { status: 'pass', detail: `initial, untouched and after a tools/list: the same ${initial.length} bytes` };
  } finally {
    await session.dispose();
  }
}

async function checkCatalog(context: ConformanceContext): Promise<Outcome> {
  const session = await openSeeded(context, 0);
  try {
    const connection = await session.connect({});
    let listed;
    try {
      listed = await listEveryTool(connection);
    } finally {
      await connection.close();
    }
    const declared = context.world.tools.map(toMcpTool);
    const names = (tools: readonly { name: string }[]) => tools.map((tool) => tool.name).join(', ');
    if (names(listed) !== names(declared)) return { status: 'fail', detail: `the live server lists [${names(listed)}]; the catalog declares [${names(declared)}]` };
    for (const [index, tool] of declared.entries()) {
      const live = listed[index]!;
      for (const field of ['description', 'inputSchema', 'outputSchema', 'annotations'] as const) {
        const a = canonicalJson(((live as unknown as Record<string, unknown>)[field] ?? null) as never);
        const b = canonicalJson(((tool as Record<string, unknown>)[field] ?? null) as never);
        if (a !== b) return { status: 'fail', detail: `${tool.name}: the live ${field} differs from the catalog's: ${firstDifference(b, a)}` };
      }
    }
    return { status: 'pass', detail: `${listed.length} tools: names, descriptions, input and output schemas and annotations as declared` };
  } finally {
    await session.dispose();
  }
}

/** Why the lane cannot give this world a scripted episode, or undefined when it can. */
function episodeSkipReason(world: AnyWorld, lane: Lane | undefined): string | undefined {
  if (!lane) return `no lane in lanes/ names the world "${world.name}": there is no scripted episode to replay`;
  // Episode production finds its world by the lane's name, in the registry.
  if (findWorld(world.name) !== world) return `the registry's "${world.name}" is not this world object: episodes of lane ${lane.name} would run on the registered one`;
  if (lane.document.policy.kind !== 'scripted') return `lane ${lane.name} is not played by the scripted policy`;
  if (lane.document.tasks.length === 0) return `lane ${lane.name} has no task`;
  return undefined;
}

async function checkScriptedReplay(context: ConformanceContext): Promise<Outcome> {
  if (context.noEpisode !== undefined) return { status: 'skip', detail: context.noEpisode };
  const { spec, record, line } = (await context.episodes())[0]!;
  const verdict = await replayRecord(JSON.parse(line) as EpisodeRecord, spec.lane, { text: line });
  const where = `lane ${spec.lane.name}, task ${spec.task.id}, seed ${spec.seed}`;
  if (!verdict.ok) return { status: 'fail', detail: `${where}: replay did not verify: ${verdict.problems.join('; ')}` };
  return { status: 'pass', detail: `${where}: produced (${record.result.outcome}, ${record.result.tool_calls} calls) and replayed: verified` };
}

/** Where two texts first part, with a little of each side. */
export function firstDifference(a: string, b: string): string {
  let index = 0;
  while (index < a.length && index < b.length && a[index] === b[index]) index++;
  const from = Math.max(0, index - 30);
  return `at byte ${index}: …${a.slice(from, index + 40)}… vs …${b.slice(from, index + 40)}…`;
}
