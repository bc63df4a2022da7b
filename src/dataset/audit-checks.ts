// Owns the checks an audit makes from the files and records alone: the
// manifest against the directory (every file's sha256, size and rows, nothing
// missing, nothing extra), every JSONL line readable (reported by file and line,
// never skipped), and what one record must be: the provenance gate (actors,
// model digests, a user simulator for simulated user turns, seed, lane and its
// hash, the commands to regenerate and replay) and the shape of its
// conversation's turns (every tool message answers a call of the assistant
// turn before it, in order, and every call is answered). audit-records.ts
// applies the record checks, with ids and lineage, as the records stream past.

import { errorMessage, FactoryError } from '../core/errors.js';
import { sha256Hex } from '../core/hashing.js';
import { actorPin } from '../models/model-pin.js';
import { existsSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { EpisodeRecord, RecordToolCall } from '../records/episode-record.js';
import { MAX_RECORD_DEPTH, parseBoundedJson } from '../core/bounded-json.js';
import { jsonLineProblem, lineProblem, readLines } from '../records/jsonl.js';
import { countRows, datasetFiles, MANIFEST_FILE, type Manifest } from '../records/manifest.js';
import { compareWithManifest, readVerifiableManifest, type ReadManifest } from '../records/manifest-verification.js';
import { EPISODES_FILE } from './dataset-reader.js';
import { DATA_DIRECTORY } from '../records/record-files.js';

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
 * Every JSONL file of the directory but the record files (whose lines the
 * record pass reads: `recordLines` is where their findings go, in the order
 * of the files, at the first of them), read line by line: torn, blank or
 * corrupt lines are findings.
 */
export async function checkLines(dir: string, recordFiles: readonly string[], recordLines: readonly Finding[]): Promise<Finding[]> {
  const findings: Finding[] = [];
  for (const path of datasetFiles(dir).filter((file) => file.endsWith('.jsonl'))) {
    const file = relative(dir, path).split(sep).join('/');
    if (recordFiles.includes(file)) {
      if (file === recordFiles[0]) findings.push(...recordLines);
      continue;
    }
    for await (const entry of readLines(path)) {
      let reason = lineProblem(entry);
      if (reason === undefined) {
        try {
          parseBoundedJson(entry.text, { maxDepth: MAX_RECORD_DEPTH, where: 'the line' });
        } catch (error) {
          reason = jsonLineProblem(error);
        }
      }
      if (reason !== undefined) findings.push({ check: 'lines', where: `${file}:${entry.line}`, reason });
    }
  }
  return findings;
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
export function recordPlace(file: string, line: number, record: EpisodeRecord): string {
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

/**
 * The provenance gate's problems with one record: its actors, its user
 * simulator, its commands, its lane against the manifest's (`laneHashes`,
 * empty when there is no manifest). `placed` problems point at the record
 * (line and id), the others at the line.
 */
export function provenanceProblems(record: EpisodeRecord, laneHashes: ReadonlyMap<string, string>, hasManifest: boolean): { placed: boolean; reason: string }[] {
  const problems: { placed: boolean; reason: string }[] = [];
  const { lineage } = record.provenance;
  for (const problem of actorProblems(record)) problems.push({ placed: false, reason: problem });
  for (const problem of userActorProblems(record)) problems.push({ placed: true, reason: problem });
  if (!lineage.generate_command.includes(` ${lineage.lane} `) || !lineage.generate_command.includes(`--seeds ${lineage.seed}..${lineage.seed}`)) {
    problems.push({ placed: false, reason: `generate_command does not regenerate lane ${lineage.lane} seed ${lineage.seed}: ${lineage.generate_command}` });
  }
  if (!lineage.replay_command.includes(record.record_id)) problems.push({ placed: false, reason: `replay_command does not name ${record.record_id}` });
  const listed = laneHashes.get(lineage.lane);
  if (hasManifest && listed === undefined) problems.push({ placed: false, reason: `lane ${lineage.lane} is not among the manifest's lanes` });
  else if (listed !== undefined && listed !== lineage.lane_sha256) {
    problems.push({ placed: false, reason: `lane_sha256 ${lineage.lane_sha256.slice(0, 12)}… differs from the manifest's ${listed.slice(0, 12)}…` });
  }
  return problems;
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

/** Where a record id falls in the audit's sample order: the smallest keys are reproduced. */
export function sampleKey(id: string): string {
  return sha256Hex(`audit\u0000${id}`);
}

/** A deterministic sample of record ids, independent of file order (what the audit's streamed sample draws). */
export function sampleIds(ids: readonly string[], size: number): string[] {
  return [...ids].sort((left, right) => {
    const [a, b] = [sampleKey(left), sampleKey(right)];
    return a < b ? -1 : a > b ? 1 : 0;
  }).slice(0, size);
}

export function parentIdsExist(dirs: readonly string[]): string[] {
  return dirs.filter((dir) => !existsSync(join(dir, EPISODES_FILE)) && !existsSync(join(dir, DATA_DIRECTORY)));
}
