// Owns `lanes rewrite`: a chat model of any provider (the writer) rewords
// each task's request ahead of any run. What it returns is filtered (same placeholders, no rule
// syntax, nothing the task already says), checked with the whole lane as a
// run would load it, and written atomically as the lane's rewrites cache, with
// the writer's identity. Runs then draw from the cache alone.

import { dirname, join } from 'node:path';
import { FactoryError } from '../core/errors.js';
import { substream } from '../core/random.js';
import { readDefinitionFile } from '../core/definition-file.js';
import { REWRITES_FORMAT, type Lane, type LaneDocument, type RewritesCache } from '../lanes/lane.js';
import { checkLane } from '../lanes/lane-checks.js';
import { loadLane, parseLane } from '../lanes/lane-loader.js';
import { phrasingsOf } from '../lanes/phrasing-grammar.js';
import { applyRewrites, rewriteProblem, rewritesFileName } from '../lanes/phrasing-rewrites.js';
import type { Actor } from '../policy/policy-contract.js';
import type { JsonObject } from '../core/json-value.js';
import { writeFileAtomically } from '../records/atomic-file.js';

/** How many of a task's phrasings the writer is shown, spread over all of them. */
const SHOWN_PHRASINGS = 6;

export interface Writer {
  readonly actor: Actor & JsonObject;
  reword(phrasings: readonly string[], count: number): Promise<string[]>;
}

export interface TaskRewrite {
  task: string;
  /** What the writer returned, line by line. */
  returned: number;
  kept: string[];
  rejected: { text: string; reason: string }[];
}

export interface LaneRewrite {
  lane: string;
  file: string;
  writer: JsonObject;
  tasks: TaskRewrite[];
  kept: number;
  /** Whether the lane file already names the cache; if not, nothing draws from it until it does. */
  named: boolean;
}

/** The writer's sampling seed: fixed per lane, so asking again asks the same way. */
export function writerSeed(laneName: string): number {
  return substream(0, `writer:${laneName}`).int(0, 2 ** 31 - 1);
}

/**
 * The lane at `path` as its author wrote it, without its cache: the writer
 * rewords the author's phrasings only, and a lane that names a cache not yet
 * written still loads here.
 */
export function laneWithoutRewrites(path: string): { document: LaneDocument; lane: Lane } {
  let document: LaneDocument;
  try {
    document = readDefinitionFile(path) as LaneDocument;
  } catch (error) {
    // Not UTF-8 JSON within the limits: the loader says exactly what is wrong, with the fix.
    loadLane(path);
    throw error;
  }
  const { rewrites: _rewrites, ...own } = document;
  return { document, lane: parseLane(JSON.stringify(own), path) };
}

export async function rewriteLane(path: string, writer: Writer, options: { count: number; tasks?: readonly string[]; onTask?: (result: TaskRewrite) => void }): Promise<LaneRewrite> {
  const { document: written, lane } = laneWithoutRewrites(path);
  const shared = lane.document.phrasing;
  const unknown = (options.tasks ?? []).filter((id) => !lane.document.tasks.some((task) => task.id === id));
  if (unknown.length) throw new FactoryError('usage', `lane ${lane.name} has no task ${unknown.map((id) => `"${id}"`).join(', ')}`, { fix: `tasks are: ${lane.document.tasks.map((task) => task.id).join(', ')}` });
  const results: TaskRewrite[] = [];
  const cache: RewritesCache = { format: REWRITES_FORMAT, lane: lane.name, writer: writer.actor as RewritesCache['writer'], tasks: {} };
  for (const task of lane.document.tasks) {
    if (options.tasks?.length && !options.tasks.includes(task.id)) continue;
    const all = phrasingsOf(task.user, shared).map((phrasing) => phrasing.template);
    const shown = all.length <= SHOWN_PHRASINGS ? all : Array.from({ length: SHOWN_PHRASINGS }, (_, index) => all[Math.floor((index * all.length) / SHOWN_PHRASINGS)]!);
    const returned = await writer.reword(shown, options.count);
    const result: TaskRewrite = { task: task.id, returned: returned.length, kept: [], rejected: [] };
    for (const text of returned) {
      const reason = result.kept.includes(text) ? 'repeats another line' : rewriteProblem(text, task.user, shared);
      if (reason) result.rejected.push({ text, reason });
      else result.kept.push(text);
    }
    // The lane as a run would load it must hold: a phrasing that breaks a check is not kept.
    if (result.kept.length > 0) {
      const problems = checkLane(applyRewrites(lane.document, { ...cache, tasks: { [task.id]: result.kept } }), lane.path, lane.name);
      if (problems.length > 0) {
        result.rejected.push(...result.kept.map((text) => ({ text, reason: `with it the lane fails its checks: ${problems[0]!.reason}` })));
        result.kept = [];
      }
    }
    if (result.kept.length > 0) cache.tasks[task.id] = result.kept;
    options.onTask?.(result);
    results.push(result);
  }
  const file = join(dirname(lane.path), rewritesFileName(lane.name));
  writeFileAtomically(file, JSON.stringify(cache, null, 2) + '\n');
  return {
    lane: lane.name,
    file,
    writer: writer.actor,
    tasks: results,
    kept: results.reduce((sum, result) => sum + result.kept.length, 0),
    named: written.rewrites === rewritesFileName(lane.name),
  };
}
