// Owns finding, reading and validating lane files. A lane is found by name
// (`lanes/<name>.json` under the working directory, then the factory's own
// lanes) or by path. A malformed lane is rejected with every problem listed:
// file, JSON pointer, reason. A lane (or its rewrites cache) larger or more
// deeply nested than a definition file may be is refused before anything
// recurses over it.

import { existsSync, readdirSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { JsonLimitError, type JsonLimit } from '../core/bounded-json.js';
import { errorMessage, FactoryError, type Problem } from '../core/errors.js';
import { InvalidUtf8Error } from '../core/utf8-text.js';
import { hashCanonical } from '../core/hashing.js';
import { BUILTIN_LANES_DIR } from '../core/package-paths.js';
import { validateAgainst } from '../records/schema-registry.js';
import { DEFAULT_LIMITS } from '../runner/limits.js';
import { EMPTY_PLAN } from '../world/faults/fault-plan.js';
import { REWRITES_FORMAT, type Lane, type LaneDocument, type RewritesCache } from './lane.js';
import { limitReason, parseDefinition, readDefinitionFile } from '../core/definition-file.js';
import { checkLane } from './lane-checks.js';
import { applyRewrites } from './phrasing-rewrites.js';
import { parseSeedRange } from './seed-range.js';

function validateLaneSchema(document: unknown): { where: string; reason: string }[] {
  return validateAgainst('lane.v1', document).map((error) => ({ where: error.path || '/', reason: error.reason }));
}

/** Where `lanes synthesize` output is kept beside hand-written lanes: found by name like them, proven by sample in the tests and whole in the bench. */
export const SYNTHESIZED_LANES = 'synthesized';

/** Directories searched for lanes by name, in order: each lanes/ folder, then its synthesized/ folder. */
export function laneDirectories(cwd = process.cwd()): string[] {
  const local = resolve(cwd, 'lanes');
  const builtin = resolve(BUILTIN_LANES_DIR);
  return (local === builtin ? [builtin] : [local, builtin]).flatMap((directory) => [directory, join(directory, SYNTHESIZED_LANES)]);
}

function looksLikePath(reference: string): boolean {
  return reference.endsWith('.json') || reference.includes('/') || reference.includes('\\') || isAbsolute(reference);
}

export function resolveLanePath(reference: string, cwd = process.cwd()): string {
  if (looksLikePath(reference)) {
    const path = resolve(cwd, reference);
    if (!existsSync(path)) throw new FactoryError('lane_not_found', `lane file ${reference} does not exist`, { fix: 'check the path, or name a lane from `episode-factory lanes list`' });
    return path;
  }
  for (const directory of laneDirectories(cwd)) {
    const path = join(directory, `${reference}.json`);
    if (existsSync(path)) return path;
  }
  const known = listLaneFiles(cwd).map((file) => basename(file, '.json'));
  throw new FactoryError('lane_not_found', `no lane named "${reference}"`, {
    fix: known.length ? `known lanes: ${known.join(', ')} (see \`episode-factory lanes list\`)` : 'add lanes/<name>.json, or pass a path to a lane file',
  });
}

export function listLaneFiles(cwd = process.cwd()): string[] {
  const byName = new Map<string, string>();
  for (const directory of laneDirectories(cwd)) {
    if (!existsSync(directory)) continue;
    for (const file of readdirSync(directory).sort()) {
      if (file.endsWith('.json') && !byName.has(file) && !file.endsWith('.rewrites.json') && !file.endsWith('.writer.json')) byName.set(file, join(directory, file));
    }
  }
  return [...byName.values()];
}

export function loadLane(reference: string, cwd = process.cwd()): Lane {
  const path = resolveLanePath(reference, cwd);
  let document: unknown;
  try {
    document = readDefinitionFile(path);
  } catch (error) {
    throw unreadable(path, error);
  }
  return laneOf(document, path);
}

export function parseLane(text: string, path: string): Lane {
  let document: unknown;
  try {
    document = parseDefinition(text);
  } catch (error) {
    throw unreadable(path, error);
  }
  return laneOf(document, path);
}

/** How to get a lane under each limit. */
const LANE_LIMIT_FIX: Record<JsonLimit, string> = {
  depth: "a lane nests about a dozen levels: flatten its deepest value (a predicate's all/any/not, a call's arguments, an equals)",
  size: 'a lane is tens of kilobytes: split its tasks across several lanes',
};

/** A lane file that cannot be read, is not UTF-8, is past a limit or is not JSON, as the loader reports it. */
function unreadable(path: string, error: unknown): FactoryError {
  const file = displayPath(path);
  if (error instanceof InvalidUtf8Error) return invalid(file, [{ where: file, reason: `${error.message}: a lane is UTF-8 JSON; re-save it as UTF-8 (e.g. \`iconv -f latin1 -t utf-8\`)` }]);
  if (error instanceof JsonLimitError) return invalid(file, [{ where: file, reason: `${limitReason(error, 'a lane')}; ${LANE_LIMIT_FIX[error.limit]}` }]);
  if (error instanceof SyntaxError) return invalid(file, [{ where: file, reason: `not valid JSON: ${error.message}` }]);
  return new FactoryError('lane_not_found', `cannot read lane ${path}: ${errorMessage(error)}`, { fix: 'check the file permissions' });
}

/** A lane's document, checked: its schema, its rewrites cache, and the checks a schema cannot make. */
function laneOf(document: unknown, path: string): Lane {
  const file = displayPath(path);
  const schemaProblems: Problem[] = validateLaneSchema(document).map((problem) => ({ where: `${file}: ${problem.where}`, reason: problem.reason }));
  if (schemaProblems.length > 0) throw invalid(file, schemaProblems);
  const written = document as LaneDocument;
  const rewrites = written.rewrites === undefined ? undefined : readRewrites(written, path, file);
  const lane = rewrites ? applyRewrites(written, rewrites) : written;
  const problems = checkLane(lane, file, basename(path, '.json'));
  if (problems.length > 0) throw invalid(file, problems);
  return {
    document: lane,
    name: lane.name,
    path,
    // The cached phrasings and the model that wrote them change episodes, so they are part of the lane's identity.
    sha256: rewrites ? hashCanonical({ ...withoutCard(written), rewrites }) : laneHash(written),
    ...(rewrites ? { rewrites } : {}),
    limits: { ...DEFAULT_LIMITS, ...lane.limits },
    faults: lane.faults ?? EMPTY_PLAN,
    variants: lane.policy.variants ?? { clean: 1 },
    seeds: parseSeedRange(lane.seeds, `${file}: /seeds`),
  };
}

/** The lane's identity in records: everything that can change an episode, so not the card's license or categories. */
export function laneHash(lane: LaneDocument): string {
  return hashCanonical(withoutCard(lane));
}

function withoutCard(lane: LaneDocument): Omit<LaneDocument, 'dataset_card'> {
  const { dataset_card: _card, ...episodes } = lane;
  return episodes;
}

/** The rewrites cache a lane names, read and checked; every problem names the cache file. */
function readRewrites(lane: LaneDocument, path: string, file: string): RewritesCache {
  const cachePath = join(dirname(path), lane.rewrites!);
  const cacheFile = displayPath(cachePath);
  const rerun = `run \`episode-factory lanes rewrite ${lane.name} --model ollama:<model>\` to write it, or drop "rewrites" from ${file}`;
  let cache: unknown;
  try {
    cache = readDefinitionFile(cachePath);
  } catch (error) {
    const reason =
      (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist' : error instanceof JsonLimitError ? limitReason(error, 'a rewrites cache') : `cannot be read: ${errorMessage(error)}`;
    throw invalid(file, [{ where: `${file}: /rewrites`, reason: `${cacheFile} ${reason}; ${rerun}` }]);
  }
  const problems: Problem[] = validateAgainst('rewrites.v1', cache).map((error) => ({ where: `${cacheFile}: ${error.path || '/'}`, reason: error.reason }));
  if (problems.length === 0) {
    const rewrites = cache as RewritesCache;
    if (rewrites.lane !== lane.name) problems.push({ where: `${cacheFile}: /lane`, reason: `is "${rewrites.lane}", but the lane is "${lane.name}"; ${rerun}` });
    for (const task of Object.keys(rewrites.tasks)) {
      if (!lane.tasks.some((candidate) => candidate.id === task)) problems.push({ where: `${cacheFile}: /tasks/${task}`, reason: `the lane has no task "${task}"; ${rerun}` });
    }
  }
  if (problems.length > 0) throw invalid(file, problems);
  return { ...(cache as RewritesCache), format: REWRITES_FORMAT };
}

function invalid(file: string, problems: Problem[]): FactoryError {
  return new FactoryError('lane_invalid', `${file} is not a valid lane (${problems.length} problem${problems.length === 1 ? '' : 's'})`, {
    fix: 'fix each problem listed above; the format is schemas/lane.v1.schema.json',
    problems,
  });
}

function displayPath(path: string): string {
  const relative = path.startsWith(process.cwd() + '/') ? path.slice(process.cwd().length + 1) : path;
  return relative;
}
