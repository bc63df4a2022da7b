// Owns assembling an episode record from what an episode produced and how it
// was judged. Generation and replay both build records here, so a replayed
// episode can be compared with its record field by field.

import type { ToolDescriptor } from '../core/conversation.js';
import { hashCanonical } from '../core/hashing.js';
import { enterPhase, exitPhase } from '../core/phase-profile.js';
import type { JsonObject, JsonValue } from '../core/json-value.js';
import { FACTORY_VERSION } from '../core/package-paths.js';
import { isModelVariant, recordId, rolloutRecordId } from '../lanes/episode-plan.js';
import type { Lane, Task } from '../lanes/lane.js';
import { RECORD_FAMILY, RECORD_SCHEMA_VERSION, toRecordMessage, toRecordTool, type EpisodeRecord, type FaultFired, type ServerFaultRecord } from '../records/episode-record.js';
import type { AgentRun } from '../runner/agent-loop.js';
import type { Evidence } from './claims.js';
import type { PredicateVerdict } from './predicates.js';

export interface RecordParts {
  lane: Lane;
  task: Task;
  seed: number;
  variant: string;
  /** The rollout of a GRPO group this episode is (EpisodeSpec.rollout). */
  rollout?: number | undefined;
  /** The grammar's choice path of the user message; undefined for a one-sentence message. */
  phrasing?: string | undefined;
  world: { name: string; version: string };
  catalog: ToolDescriptor[];
  run: AgentRun;
  verdicts: PredicateVerdict[];
  evidence: Evidence;
  initialSnapshot: JsonValue;
  finalSnapshot: JsonValue;
  actors: JsonObject[];
  producedAt: string;
  faultsFired: FaultFired[];
  /** The faults of the world's own process, as its session records them (absent where the world runs none: scripted worlds' records stay as they were). */
  serverFaults?: ServerFaultRecord[];
}

/**
 * The record's own pair of commands: regenerate just this episode into a
 * directory of its own (never over the dataset it came from), then replay it
 * there. The dataset's location is not part of the record, so that the same
 * episode has the same bytes wherever it is written.
 */
export function regeneratedDirectory(id: string): string {
  return `regenerated/${id}`;
}

export function generateCommand(
  lane: string,
  task: string,
  seed: number,
  id: string,
  choice: { variant?: string; policy?: string; user?: string; digests?: readonly string[] } = {},
): string {
  const only = choice.policy !== undefined ? ` --policy ${choice.policy}` : choice.variant !== undefined ? ` --variant ${choice.variant}` : '';
  const user = choice.user !== undefined ? ` --user ${choice.user}` : '';
  const digests = (choice.digests ?? []).map((digest) => ` --model-digest ${digest}`).join('');
  return `episode-factory generate ${lane} --task ${task} --seeds ${seed}..${seed}${only}${user}${digests} --out ${regeneratedDirectory(id)}`;
}

export function replayCommand(id: string): string {
  return `episode-factory replay ${regeneratedDirectory(id)} --record ${id}`;
}

/** A model playing the user is part of how to make the episode again: `--user ollama:<model>`. */
function userFlag(actors: readonly JsonObject[]): { user?: string } {
  const user = actors.find((actor) => actor.role === 'user');
  return user?.kind === 'model' && typeof user.provider === 'string' && typeof user.name === 'string' ? { user: `${user.provider}:${user.name}` } : {};
}

/**
 * A served model's digest is part of how to make the episode again: the
 * server pins it only when it reports one, so `--model-digest <model>=<digest>`
 * is given for every openai: actor that has a digest (a server that reports
 * the same one accepts it).
 */
function digestFlags(actors: readonly JsonObject[]): { digests?: string[] } {
  const digests = actors
    .filter((actor) => (actor.role === 'policy' || actor.role === 'user') && actor.provider === 'openai' && typeof actor.digest === 'string' && typeof actor.name === 'string')
    .map((actor) => `${String(actor.name)}=${String(actor.digest)}`);
  return digests.length > 0 ? { digests: [...new Set(digests)] } : {};
}

export function assembleRecord(parts: RecordParts): EpisodeRecord {
  const { lane, task, seed, run, verdicts } = parts;
  const model = isModelVariant(parts.variant);
  const each = !model && lane.document.policy.draw === 'each';
  const groupId = recordId(lane.name, task.id, seed, model || each ? parts.variant : undefined);
  const id = parts.rollout === undefined ? groupId : rolloutRecordId(groupId, parts.rollout);
  // A claim without a call behind it fails the task, whatever the predicates say.
  const completed = run.outcome.kind === 'final_answer' && verdicts.every((verdict) => verdict.passed) && parts.evidence.unsupported === 0;
  enterPhase('snapshot_hash');
  const initialSnapshotSha256 = hashCanonical(parts.initialSnapshot);
  const finalSnapshotSha256 = hashCanonical(parts.finalSnapshot);
  exitPhase('snapshot_hash');
  return {
    record_id: id,
    family: RECORD_FAMILY,
    schema_version: RECORD_SCHEMA_VERSION,
    world: parts.world,
    task: { id: task.id, title: task.title, tags: task.tags ?? [] },
    tools: parts.catalog.map(toRecordTool),
    messages: run.messages.map(toRecordMessage),
    catalog_updates: run.catalog_updates.map((update) => ({ ...update, added: update.added.map(toRecordTool) })),
    recovery: {
      error_turns: run.stats.error_turns,
      recovered: (run.stats.error_turns > 0 || parts.faultsFired.length > 0) && completed,
      faults_fired: parts.faultsFired,
      ...(parts.serverFaults ? { server_faults: parts.serverFaults } : {}),
    },
    result: {
      task_completed: completed,
      verified_by: 'replay',
      outcome: run.outcome.kind,
      ...(run.outcome.detail === undefined ? {} : { outcome_detail: run.outcome.detail }),
      predicates: verdicts,
      evidence: parts.evidence,
      steps: run.stats.steps,
      tool_calls: run.stats.tool_calls,
      rejected_calls: run.stats.rejected_calls,
      initial_snapshot_sha256: initialSnapshotSha256,
      final_snapshot_sha256: finalSnapshotSha256,
    },
    provenance: {
      produced_at: parts.producedAt,
      actors: parts.actors,
      lineage: {
        lane: lane.name,
        lane_sha256: lane.sha256,
        task: task.id,
        variant: parts.variant,
        seed,
        ...(parts.rollout === undefined ? {} : { group_id: groupId, rollout: parts.rollout }),
        ...(parts.phrasing === undefined ? {} : { phrasing: parts.phrasing }),
        operation: 'generate',
        source_record_id: null,
        generate_command: generateCommand(lane.name, task.id, seed, id, { ...(model ? { policy: parts.variant } : each ? { variant: parts.variant } : {}), ...userFlag(parts.actors), ...digestFlags(parts.actors) }),
        replay_command: replayCommand(id),
        factory_version: FACTORY_VERSION,
      },
    },
  };
}
