// Owns the figures an experiment reports for one policy's evaluation, computed
// from its verified records alone (so anyone can recompute them from the
// files): tasks completed with a Wilson interval; well-formed calls (parsed,
// to a tool in the catalog, valid against its schema); exact calls (a tool
// and arguments that the scripted solution of the same episode also called,
// its deliberate mistakes aside); completion after each fault kind; and the
// paired comparison of two policies over the same episodes (exact McNemar).

import { canonicalJson } from '../core/canonical-json.js';
import { mcnemarExact, type McNemar } from '../statistics/mcnemar-test.js';
import { wilsonInterval, type Rate } from '../statistics/wilson-interval.js';
import type { EpisodeRecord, RecordToolCall } from '../records/episode-record.js';
import { trainedTurns } from './training-corpus.js';

export interface PolicyFigures {
  episodes: number;
  completed: Rate;
  /** Calls the policy tried to make: each call of a turn, and a malformed turn as one. */
  calls: number;
  well_formed: Rate;
  /** Calls whose tool and arguments the scripted solution of the same episode also made. */
  exact: Rate;
  /** Episodes in which a fault of this kind fired, and the share still completed. */
  recovery: Record<string, Rate>;
}

/** The episode a record plays, whoever played it: its task and seed. */
export function episodeKey(record: EpisodeRecord): string {
  return `${record.provenance.lineage.task}#${record.provenance.lineage.seed}`;
}

const REJECTED_BEFORE_TOOL = new Set(['invalid_arguments', 'unknown_tool', 'malformed_tool_call']);

/** A renamed tool is the same tool: calls are compared under the name the catalog first gave it. */
function originalNames(record: EpisodeRecord): Map<string, string> {
  const names = new Map<string, string>();
  for (const update of record.catalog_updates) {
    update.added.forEach((tool, index) => {
      const original = update.removed[index];
      if (original !== undefined && update.removed.length === update.added.length) names.set(tool.name, names.get(original) ?? original);
    });
  }
  return names;
}

function callKey(call: RecordToolCall, names: Map<string, string>): string {
  let args: unknown = call.arguments;
  if (typeof args === 'string') {
    try {
      args = JSON.parse(args);
    } catch {
      // Text that is not JSON is compared as text.
    }
  }
  return `${names.get(call.name) ?? call.name}\u0000${canonicalJson(args)}`;
}

/** The calls the scripted solution meant in an episode (its deliberate mistakes left out). */
export function intendedCalls(reference: EpisodeRecord): Set<string> {
  const names = originalNames(reference);
  const keys = new Set<string>();
  for (const turn of trainedTurns(reference)) {
    const message = reference.messages[turn]!;
    if (message.role === 'assistant') for (const call of message.tool_calls ?? []) keys.add(callKey(call, names));
  }
  return keys;
}

export function policyFigures(records: readonly EpisodeRecord[], references: ReadonlyMap<string, EpisodeRecord>): PolicyFigures {
  let calls = 0;
  let wellFormed = 0;
  let exact = 0;
  const fired = new Map<string, { episodes: number; completed: number }>();
  for (const record of records) {
    const reference = references.get(episodeKey(record));
    const intended = reference ? intendedCalls(reference) : new Set<string>();
    const names = originalNames(record);
    const results = new Map<string, string>();
    for (const message of record.messages) if (message.role === 'tool' && message.tool_call_id !== null) results.set(message.tool_call_id, message.tool_result.kind ?? 'ok');
    for (const message of record.messages) {
      if (message.role !== 'assistant') continue;
      if (message.malformed_tool_call && !message.tool_calls) {
        calls++;
        continue;
      }
      for (const call of message.tool_calls ?? []) {
        calls++;
        const kind = results.get(call.id);
        if (kind === undefined || !REJECTED_BEFORE_TOOL.has(kind)) wellFormed++;
        if (intended.has(callKey(call, names))) exact++;
      }
    }
    for (const kind of new Set(record.recovery.faults_fired.map((fault) => fault.kind))) {
      const tally = fired.get(kind) ?? { episodes: 0, completed: 0 };
      tally.episodes++;
      if (record.result.task_completed) tally.completed++;
      fired.set(kind, tally);
    }
  }
  const recovery: Record<string, Rate> = {};
  for (const kind of [...fired.keys()].sort()) recovery[kind] = wilsonInterval(fired.get(kind)!.completed, fired.get(kind)!.episodes);
  return {
    episodes: records.length,
    completed: wilsonInterval(records.filter((record) => record.result.task_completed).length, records.length),
    calls,
    well_formed: wilsonInterval(wellFormed, calls),
    exact: wilsonInterval(exact, calls),
    recovery,
  };
}

export interface PairedComparison {
  first: string;
  second: string;
  /** Episodes both policies played. */
  episodes: number;
  /** Completion of the second minus the first, over those episodes. */
  difference: number;
  mcnemar: McNemar;
}

/** Two policies over the episodes both played, paired by task and seed. */
export function comparePolicies(first: string, firstRecords: readonly EpisodeRecord[], second: string, secondRecords: readonly EpisodeRecord[]): PairedComparison {
  const theirs = new Map(secondRecords.map((record) => [episodeKey(record), record.result.task_completed]));
  let firstOnly = 0;
  let secondOnly = 0;
  let episodes = 0;
  for (const record of firstRecords) {
    const other = theirs.get(episodeKey(record));
    if (other === undefined) continue;
    episodes++;
    if (record.result.task_completed && !other) firstOnly++;
    if (!record.result.task_completed && other) secondOnly++;
  }
  return { first, second, episodes, difference: episodes === 0 ? 0 : (secondOnly - firstOnly) / episodes, mcnemar: mcnemarExact(firstOnly, secondOnly) };
}
