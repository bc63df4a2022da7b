// Owns replay verification: rebuild an episode from its record alone (lane by
// name and hash, task, seed, and the recorded actions) on a fresh world through
// the real MCP server, then require the rebuilt record to equal the stored one.
// Every tool result, the final snapshot hash, every predicate verdict and the
// recovery accounting must match; any difference is reported with its place.

import { canonicalJson } from '../core/canonical-json.js';
import { errorMessage } from '../core/errors.js';
import { jsonDifferences } from '../core/json-diff.js';
import { findTask, type Lane } from '../lanes/lane.js';
import { TaskBindingError } from '../lanes/task-instance.js';
import type { EpisodeRecord } from '../records/episode-record.js';
import { validateAgainst } from '../records/schema-registry.js';
import type { TraceSink } from '../runner/trace.js';
import { produceEpisode } from './episode-production.js';
import { recordedActions, REPLAY_EXHAUSTED, ReplayPolicy } from './replay-policy.js';

export interface ReplayVerdict {
  record_id: string;
  ok: boolean;
  problems: string[];
}

export async function replayRecord(candidate: unknown, lane: Lane, options: { trace?: TraceSink } = {}): Promise<ReplayVerdict> {
  const recordIdOf = (value: unknown): string =>
    typeof value === 'object' && value !== null && typeof (value as { record_id?: unknown }).record_id === 'string'
      ? (value as { record_id: string }).record_id
      : '(no record_id)';
  const id = recordIdOf(candidate);
  const schemaErrors = validateAgainst('episode-record.v1', candidate);
  if (schemaErrors.length > 0) {
    return { record_id: id, ok: false, problems: schemaErrors.slice(0, 10).map((error) => `schema: ${error.path || '/'}: ${error.reason}`) };
  }
  const record = candidate as EpisodeRecord;
  const { lineage } = record.provenance;
  if (lineage.lane !== lane.name) {
    return { record_id: id, ok: false, problems: [`record is from lane "${lineage.lane}", not "${lane.name}"`] };
  }
  if (lineage.lane_sha256 !== lane.sha256) {
    return {
      record_id: id,
      ok: false,
      problems: [`lane ${lane.name} has changed since this record was made (lane sha256 ${lane.sha256.slice(0, 12)}…, record says ${lineage.lane_sha256.slice(0, 12)}…)`],
    };
  }
  const task = findTask(lane, lineage.task);
  if (!task) return { record_id: id, ok: false, problems: [`lane ${lane.name} has no task "${lineage.task}"`] };

  const policyActor = record.provenance.actors.find((actor) => actor.role === 'policy') as ConstructorParameters<typeof ReplayPolicy>[1];
  const exhausted = record.result.outcome === 'policy_error' && record.result.outcome_detail ? record.result.outcome_detail : REPLAY_EXHAUSTED;
  let actions;
  try {
    actions = recordedActions(record.messages);
  } catch (error) {
    return { record_id: id, ok: false, problems: [errorMessage(error)] };
  }
  const policy = new ReplayPolicy(actions, policyActor, exhausted);

  let rebuilt: EpisodeRecord;
  try {
    rebuilt = await produceEpisode({ lane, task, seed: lineage.seed }, () => policy, {
      producedAt: record.provenance.produced_at,
      trace: options.trace,
    });
  } catch (error) {
    const stage = error instanceof TaskBindingError ? 'task parameters' : 'replay';
    return { record_id: id, ok: false, problems: [`${stage} failed: ${errorMessage(error)}`] };
  }

  // Wall time is not replayable: a replay that runs out of actions where the
  // original ran out of time has reproduced everything that can be reproduced.
  if (record.result.outcome === 'wall_time_limit' && rebuilt.result.outcome === 'policy_error' && rebuilt.result.outcome_detail === REPLAY_EXHAUSTED) {
    rebuilt.result.outcome = 'wall_time_limit';
    if (record.result.outcome_detail === undefined) delete rebuilt.result.outcome_detail;
    else rebuilt.result.outcome_detail = record.result.outcome_detail;
  }

  if (canonicalJson(rebuilt) === canonicalJson(record)) return { record_id: id, ok: true, problems: [] };
  return { record_id: id, ok: false, problems: explain(record, rebuilt) };
}

function explain(record: EpisodeRecord, rebuilt: EpisodeRecord): string[] {
  return jsonDifferences(record, rebuilt).map((difference) => {
    const what = describePointer(difference.pointer, record);
    return `${what}${difference.pointer}: record has ${difference.left}, replay gives ${difference.right}`;
  });
}

function describePointer(pointer: string, record: EpisodeRecord): string {
  const message = /^\/messages\/(\d+)/.exec(pointer);
  if (message) {
    const entry = record.messages[Number(message[1])];
    if (entry?.role === 'tool') return `tool result of ${entry.tool_call_id ?? 'a malformed call'} differs at `;
    return `message ${message[1]} differs at `;
  }
  if (pointer.startsWith('/result/final_snapshot_sha256')) return 'final world state differs at ';
  if (pointer.startsWith('/result/predicates')) return 'a hidden predicate verdict differs at ';
  return 'differs at ';
}
