// Owns the checks an audit makes from the files and records alone: the
// manifest against the directory (every file's sha256, size and rows, nothing
// missing, nothing extra), every JSONL line readable (reported by file and line,
// never skipped), record ids unique and every source_record_id resolvable, a
// derived record byte for byte its source's with the derived lineage (and the
// source the very one its manifest names), the
// provenance gate (actors, model digests, a user simulator for simulated user
// turns, seed, lane and its hash, the commands to regenerate and replay), and
// the shape of each conversation's turns (every tool message answers a call of
// the assistant turn before it, in order, and every call is answered).

import { errorMessage, FactoryError } from '../core/errors.js';
import { actorPin } from '../models/model-pin.js';
import { existsSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { EpisodeRecord, RecordToolCall } from '../records/episode-record.js';
import { deriveRecord } from '../records/lineage.js';
import { readJsonl } from '../records/jsonl.js';
import { countRows, datasetFiles, MANIFEST_FILE, type Manifest } from '../records/manifest.js';
import { compareWithManifest, readVerifiableManifest, type ReadManifest } from '../records/manifest-verification.js';
import { type Dataset, EPISODES_FILE } from './dataset-reader.js';

export type AuditCheck = 'manifest' | 'lines' | 'ids' | 'lineage' | 'provenance' | 'turns' | 'columnar' | 'reproduction';

export interface Finding {
  check: AuditCheck;
  where: string;
  reason: string;
}

export async function checkManifest(dir: string): Promise<{ manifest?: Manifest; sha256?: string; findings: Finding[] }> {
  const findings: Finding[] = [];
  const found = (where: string, reason: string) => findings.push({ check: 'manifest', where, reason });
  let read: ReadManifest | undefined;
  try {
    read = readVerifiableManifest(dir);
  } catch (error) {
    // Not JSON, against its schema, or naming a path outside the directory: every problem is a finding.
    const problems = error instanceof FactoryError && error.problems.length > 0 ? error.problems : [{ where: MANIFEST_FILE, reason: errorMessage(error) }];
    for (const problem of problems) found(relative(dir, problem.where) || MANIFEST_FILE, problem.reason);
    return { findings };
  }
  if (!read) {
    found(MANIFEST_FILE, 'missing: the run that wrote this directory did not finish, or the file was removed');
    return { findings };
  }
  const { manifest } = read;
  const differences = await compareWithManifest(dir, manifest);
  for (const difference of differences) found(difference.path, difference.reason);
  const absent = new Set(differences.filter((difference) => difference.absent).map((difference) => difference.path));
  const present = new Set(datasetFiles(dir).map((path) => relative(dir, path).split(sep).join('/')));
  for (const listed of manifest.files) {
    present.delete(listed.path);
    if (absent.has(listed.path)) continue;
    let rows: number;
    try {
      rows = await countRows(join(dir, listed.path));
    } catch (error) {
      // A columnar copy that does not decode has no row count: the columnar check says where it stops.
      found(listed.path, `its rows cannot be counted: ${(error as Error).message}`);
      continue;
    }
    if (rows !== listed.rows) found(listed.path, `${rows} rows, the manifest says ${listed.rows}`);
  }
  for (const extra of [...present].sort()) found(extra, 'not in the manifest (added after it was written)');
  return { manifest, sha256: read.sha256, findings };
}

/**
 * Every JSONL file of the directory, read line by line: torn, blank or corrupt
 * lines are findings, and in the records file lines that are JSON but not
 * records. The records file, already read as `dataset`, is not read again.
 */
export async function checkLines(dir: string, dataset?: Dataset): Promise<Finding[]> {
  const findings: Finding[] = [];
  for (const path of datasetFiles(dir).filter((file) => file.endsWith('.jsonl'))) {
    const file = relative(dir, path).split(sep).join('/');
    const problems = dataset && file === dataset.file ? dataset.problems : (await readJsonl(path)).problems;
    // A record_id that comes back with other bytes is a line that reads well: what is wrong is the id.
    for (const problem of problems) findings.push({ check: 'conflict' in problem && problem.conflict ? 'ids' : 'lines', where: `${file}:${problem.line}`, reason: problem.reason });
  }
  return findings;
}

/** Ids unique; each source_record_id names a record here or in a parent dataset. */
export function checkIds(dataset: Dataset, parentIds: ReadonlySet<string>): Finding[] {
  const findings: Finding[] = [];
  const firstLine = new Map<string, number>();
  for (const { record, line } of dataset.rows) {
    const seen = firstLine.get(record.record_id);
    if (seen !== undefined) findings.push({ check: 'ids', where: `${dataset.file}:${line}`, reason: `record_id ${record.record_id} repeats line ${seen}` });
    else firstLine.set(record.record_id, line);
  }
  for (const { record, line } of dataset.rows) {
    const { operation, source_record_id: source } = record.provenance.lineage;
    if (operation === 'generate') {
      if (source !== null) findings.push({ check: 'ids', where: `${dataset.file}:${line}`, reason: `an original record has source_record_id ${source}` });
    } else if (source === null) {
      findings.push({ check: 'ids', where: `${dataset.file}:${line}`, reason: `record ${record.record_id} was made by ${operation} but names no source_record_id` });
    } else if (!parentIds.has(source) && !firstLine.has(source)) {
      findings.push({ check: 'ids', where: `${dataset.file}:${line}`, reason: `source_record_id ${source} is in neither this dataset nor a parent (pass --parent DIR)` });
    }
  }
  return findings;
}

/** A dataset passed with --parent: its records by id (their exact lines) and what its own manifest says of it. */
export interface ParentDataset {
  dir: string;
  /** The sha256 of its manifest.json; undefined when it has none. */
  manifestSha256?: string;
  /** Why its records file cannot be vouched for (differs from its manifest, or no manifest). */
  problems: string[];
  lines: Map<string, string>;
}

/**
 * A derived record (dedup's) must be its source record with the derived
 * lineage and nothing else, byte for byte; and a dataset whose manifest names
 * its source's manifest must be audited with that very source. Without this,
 * rewriting a derived dataset and its manifest would forge its lineage.
 */
export function checkLineage(dataset: Dataset, manifest: Manifest | undefined, parents: readonly ParentDataset[]): Finding[] {
  const findings: Finding[] = [];
  if (parents.length === 0) return findings;
  for (const parent of parents) for (const problem of parent.problems) findings.push({ check: 'lineage', where: parent.dir, reason: problem });
  const named = manifest?.source_manifest_sha256;
  if (named !== undefined && !parents.some((parent) => parent.manifestSha256 === named)) {
    findings.push({
      check: 'lineage',
      where: MANIFEST_FILE,
      reason: `source_manifest_sha256 is ${named.slice(0, 12)}…, but no --parent has that manifest (${parents.map((parent) => `${parent.dir}: ${parent.manifestSha256?.slice(0, 12) ?? 'none'}…`).join(', ')}): the source changed after this dataset was made from it, or this is not its source`,
    });
  }
  for (const { record, line, text } of dataset.rows) {
    const { operation, source_record_id: source } = record.provenance.lineage;
    if (operation === 'generate' || source === null) continue;
    const parentLine = parents.map((parent) => parent.lines.get(source)).find((found) => found !== undefined);
    if (parentLine === undefined) continue;
    const expected = JSON.stringify(deriveRecord(JSON.parse(parentLine) as EpisodeRecord, operation));
    if (expected !== text) {
      findings.push({ check: 'lineage', where: recordPlace(dataset.file, line, record), reason: `differs from its source record ${source} with ${operation} lineage (${firstDifference(expected, text)}): it was edited after ${operation} wrote it` });
    }
  }
  return findings;
}

/** Where two texts first differ, with a little of each, for a finding. */
function firstDifference(expected: string, actual: string): string {
  let index = 0;
  while (index < expected.length && expected[index] === actual[index]) index++;
  const excerpt = (text: string) => JSON.stringify(text.slice(Math.max(0, index - 20), index + 20));
  return `from character ${index}: expected ${excerpt(expected)}, found ${excerpt(actual)}`;
}

/** The policy actor, or a model that acted: a record without a digest for a model cannot be reproduced. */
function actorProblems(record: EpisodeRecord): string[] {
  const problems: string[] = [];
  const actors = record.provenance.actors as Record<string, unknown>[];
  if (!actors.some((actor) => actor.role === 'policy')) problems.push('no policy actor');
  for (const actor of actors) {
    const isModel = actor.kind === 'model' || actor.kind === 'ollama';
    // A served name can be given other weights tomorrow: a model acts on the record only pinned by a digest or an exact revision.
    if (isModel && actorPin(actor) === undefined) {
      problems.push(
        actor.provider === 'openai'
          ? `actor ${String(actor.name)} is a model with neither a digest nor pinned weights (weights ${JSON.stringify(actor.weights ?? null)} name no revision); generate it again with --model-digest`
          : `actor ${String(actor.name)} is a model with no digest`,
      );
    }
    // A third-party server is part of what made the record: it must be pinned as exactly as a model.
    if (actor.role === 'world' && actor.transport === 'stdio') {
      if (typeof actor.package !== 'string' || !/^(?:@[^/@]+\/)?[^/@]+@[0-9][^@]*$/.test(actor.package)) problems.push(`world ${String(actor.name)} is a third-party server with no pinned package (name@version)`);
      if (typeof actor.integrity !== 'string' || !/^sha(?:256|384|512)-/.test(actor.integrity)) problems.push(`world ${String(actor.name)} is a third-party server with no lockfile integrity (got ${JSON.stringify(actor.integrity ?? null)})`);
    }
  }
  return problems;
}

/** Where a finding about one record points: the line and the record id (a JSON pointer inside it starts the reason). */
function recordPlace(file: string, line: number, record: EpisodeRecord): string {
  return `${file}:${line} (${record.record_id})`;
}

/**
 * User messages after the opening request are the user simulator's replies:
 * a trainer masks them and replay plays them back by that actor, so a record
 * with any must name exactly one. The converse is not a finding: a record of a
 * task with a user simulator names it even when the agent never asked (the
 * simulator saw the final answer and was done); reproduction rebuilds the
 * actors from the lane and catches one added or removed by hand.
 */
function userActorProblems(record: EpisodeRecord): string[] {
  const users = record.provenance.actors.filter((actor) => actor.role === 'user');
  const replies = record.messages.filter((message) => message.role === 'user').length - 1;
  if (users.length > 1) return [`/provenance/actors: names ${users.length} user simulators (role "user"); an episode has one`];
  if (replies > 0 && users.length === 0) {
    return [`/provenance/actors: ${replies} user message${replies === 1 ? '' : 's'} after the opening request, but no user simulator (an actor with role "user") to say who wrote ${replies === 1 ? 'it' : 'them'}`];
  }
  return [];
}

export function checkProvenance(dataset: Dataset, manifest: Manifest | undefined): Finding[] {
  const findings: Finding[] = [];
  const laneHashes = new Map((manifest?.lanes ?? []).map((lane) => [lane.name, lane.sha256]));
  for (const { record, line } of dataset.rows) {
    const where = `${dataset.file}:${line}`;
    const { lineage } = record.provenance;
    for (const problem of actorProblems(record)) findings.push({ check: 'provenance', where, reason: problem });
    for (const problem of userActorProblems(record)) findings.push({ check: 'provenance', where: recordPlace(dataset.file, line, record), reason: problem });
    if (!lineage.generate_command.includes(` ${lineage.lane} `) || !lineage.generate_command.includes(`--seeds ${lineage.seed}..${lineage.seed}`)) {
      findings.push({ check: 'provenance', where, reason: `generate_command does not regenerate lane ${lineage.lane} seed ${lineage.seed}: ${lineage.generate_command}` });
    }
    if (!lineage.replay_command.includes(record.record_id)) findings.push({ check: 'provenance', where, reason: `replay_command does not name ${record.record_id}` });
    const listed = laneHashes.get(lineage.lane);
    if (manifest && listed === undefined) findings.push({ check: 'provenance', where, reason: `lane ${lineage.lane} is not among the manifest's lanes` });
    else if (listed !== undefined && listed !== lineage.lane_sha256) {
      findings.push({ check: 'provenance', where, reason: `lane_sha256 ${lineage.lane_sha256.slice(0, 12)}… differs from the manifest's ${listed.slice(0, 12)}…` });
    }
  }
  return findings;
}

/** The assistant turn whose calls the tool messages after it answer. */
interface OpenTurn {
  index: number;
  calls: RecordToolCall[];
  /** A malformed call: answered once, by a tool message with tool_call_id null. */
  malformed: boolean;
  /** Ids answered so far (for a malformed call, "null" once it is). */
  answered: Set<string>;
}

/**
 * The problems of one conversation's turns, each starting with a JSON
 * pointer. The runner answers the calls of a turn one tool message each, in
 * the order given, before anything else is said; chat templates that match
 * results to calls by position (Hermes) need that order, and the others match
 * by `tool_call_id`. A turn may stay partly unanswered only where the episode
 * ran out of wall time: its last turn, with nothing after it.
 */
export function turnProblems(record: EpisodeRecord): string[] {
  const problems: string[] = [];
  const { messages } = record;
  const seenIds = new Map<string, number>();
  let open: OpenTurn | undefined;
  let openingSeen = false;
  const close = (next: number) => {
    if (!open) return;
    const stoppedHere = next === messages.length && record.result.outcome === 'wall_time_limit';
    if (!stoppedHere) {
      if (open.malformed && open.answered.size === 0) {
        problems.push(`/messages/${open.index}/malformed_tool_call: the malformed call is never answered (by a tool message with tool_call_id null)`);
      }
      for (const [position, call] of open.calls.entries()) {
        if (!open.answered.has(call.id)) {
          problems.push(`/messages/${open.index}/tool_calls/${position}: ${call.id} (${call.name}) is never answered, and the episode did not stop there (outcome ${record.result.outcome})`);
        }
      }
    }
    open = undefined;
  };
  messages.forEach((message, index) => {
    switch (message.role) {
      case 'system':
        close(index);
        break;
      case 'user':
        close(index);
        if (openingSeen) {
          const before = messages[index - 1];
          if (before?.role !== 'assistant' || (before.tool_calls?.length ?? 0) > 0 || before.malformed_tool_call) {
            problems.push(`/messages/${index}: a simulated user turn must answer an assistant turn without calls, not ${before ? `a ${before.role} message` : 'nothing'}`);
          }
        }
        openingSeen = true;
        break;
      case 'assistant': {
        close(index);
        const calls = message.tool_calls ?? [];
        for (const [position, call] of calls.entries()) {
          const earlier = seenIds.get(call.id);
          if (earlier !== undefined) problems.push(`/messages/${index}/tool_calls/${position}/id: ${call.id} is already the id of a call at /messages/${earlier}; a tool message could not say which it answers`);
          else seenIds.set(call.id, index);
        }
        if (calls.length > 0 || message.malformed_tool_call) open = { index, calls, malformed: calls.length === 0, answered: new Set() };
        break;
      }
      case 'tool': {
        const pointer = `/messages/${index}/tool_call_id`;
        if (!open) {
          problems.push(`${pointer}: ${JSON.stringify(message.tool_call_id)} answers no call: it does not follow an assistant turn with calls (or that turn's other results)`);
          break;
        }
        if (open.malformed) {
          if (message.tool_call_id !== null) problems.push(`${pointer}: ${JSON.stringify(message.tool_call_id)} answers the malformed call at /messages/${open.index}, which has no id (null expected)`);
          else if (open.answered.size > 0) problems.push(`${pointer}: a second answer to the malformed call at /messages/${open.index}`);
          open.answered.add('null');
          break;
        }
        const ids = open.calls.map((call) => call.id);
        const id = message.tool_call_id;
        const position = id === null ? -1 : ids.indexOf(id);
        if (id === null || position < 0) {
          problems.push(`${pointer}: ${JSON.stringify(id)} is not a call of the assistant turn at /messages/${open.index} (${ids.join(', ')})`);
          break;
        }
        if (open.answered.has(id)) {
          problems.push(`${pointer}: ${id} is answered again (the assistant turn at /messages/${open.index} gets one answer per call)`);
          break;
        }
        const skipped = ids.slice(0, position).find((earlier) => !open!.answered.has(earlier));
        if (skipped !== undefined) problems.push(`${pointer}: ${id} is answered before ${skipped} (the calls of /messages/${open.index} are answered in the order given)`);
        open.answered.add(id);
        const call = open.calls[position]!;
        if (message.name !== call.name) problems.push(`/messages/${index}/name: ${JSON.stringify(message.name)} answers ${call.id}, a call of ${call.name}`);
        break;
      }
    }
  });
  close(messages.length);
  return problems;
}

export function checkTurns(dataset: Dataset): Finding[] {
  const findings: Finding[] = [];
  for (const { record, line } of dataset.rows) {
    for (const problem of turnProblems(record)) findings.push({ check: 'turns', where: recordPlace(dataset.file, line, record), reason: problem });
  }
  return findings;
}

/** A deterministic sample of record ids, independent of file order. */
export function sampleIds(ids: readonly string[], size: number, hash: (text: string) => string): string[] {
  return [...ids].sort((left, right) => {
    const [a, b] = [hash(`audit\u0000${left}`), hash(`audit\u0000${right}`)];
    return a < b ? -1 : a > b ? 1 : 0;
  }).slice(0, size);
}

export function parentIdsExist(dirs: readonly string[]): string[] {
  return dirs.filter((dir) => !existsSync(join(dir, EPISODES_FILE)));
}
