// Owns replay verification: rebuild an episode from its record alone (lane by
// name and hash, task, seed, and the recorded actions) on a fresh world through
// the real MCP server, then require the rebuilt record to equal the stored one.
// Every tool result, the final snapshot hash, every predicate verdict and the
// recovery accounting must match; any difference is reported with its place.

import { canonicalEquals } from '../core/canonical-json.js';
import { errorMessage } from '../core/errors.js';
import { enterPhase, exitPhase } from '../core/phase-profile.js';
import { jsonDifferences } from '../core/json-diff.js';
import { everyVariant, isModelVariant } from '../lanes/episode-plan.js';
import { findTask, type Lane } from '../lanes/lane.js';
import { TaskBindingError } from '../lanes/task-instance.js';
import type { EpisodeRecord } from '../records/episode-record.js';
import { validateAgainst } from '../records/schema-registry.js';
import type { TraceSink } from '../runner/trace.js';
import { MODEL_TURN_PAST_WALL_TIME, USER_TURN_PAST_WALL_TIME, WALL_TIME_EXCEEDED, type WallTimeHalt } from '../runner/agent-loop.js';
import { FACTORY_VERSION } from '../core/package-paths.js';
import { installedWorldMismatch } from '../world/installed-world.js';
import { mcpSdkVersion } from '../world/world-actor.js';
import { produceEpisode, scriptedUserFor, type PolicyFactory, type UserFactory } from './episode-production.js';
import { recordedActions, REPLAY_EXHAUSTED, ReplayPolicy } from './replay-policy.js';
import { recordedUserReplies, ReplayUser } from './replay-user.js';

export interface ReplayVerdict {
  record_id: string;
  ok: boolean;
  problems: string[];
}

export interface ReplayOptions {
  trace?: TraceSink;
  /** The record's exact line: the rebuilt record must then serialize to exactly these bytes. */
  text?: string;
  /**
   * The caller has just validated the value `text` was serialized from against
   * the record schema (episode verification does): the schema is not checked
   * a second time on its parse.
   */
  schemaChecked?: boolean;
  /**
   * A policy that can derive the record's actions again (a scripted one). The
   * episode is then rebuilt by that policy instead of by re-issuing the
   * recorded actions, so edited text or arguments are caught too.
   */
  derivePolicy?: (actor: Record<string, unknown>) => PolicyFactory | undefined;
}

function idOf(value: unknown): string {
  return typeof value === 'object' && value !== null && typeof (value as { record_id?: unknown }).record_id === 'string'
    ? (value as { record_id: string }).record_id
    : '(no record_id)';
}

export async function replayRecord(candidate: unknown, lane: Lane, options: ReplayOptions = {}): Promise<ReplayVerdict> {
  const id = idOf(candidate);
  const fail = (...problems: string[]): ReplayVerdict => ({ record_id: id, ok: false, problems });
  if (!(options.schemaChecked === true && options.text !== undefined)) {
    enterPhase('validation');
    const schemaErrors = validateAgainst('episode-record.v1', candidate);
    exitPhase('validation');
    if (schemaErrors.length > 0) return fail(...schemaErrors.slice(0, 10).map((error) => `schema: ${error.path || '/'}: ${error.reason}`));
  }
  const record = candidate as EpisodeRecord;
  const { lineage } = record.provenance;
  if (lineage.lane !== lane.name) return fail(`record is from lane "${lineage.lane}", not "${lane.name}"`);
  if (lineage.lane_sha256 !== lane.sha256) {
    return fail(`lane ${lane.name} has changed since this record was made (lane sha256 ${lane.sha256.slice(0, 12)}…, record says ${lineage.lane_sha256.slice(0, 12)}…)`);
  }
  const task = findTask(lane, lineage.task);
  if (!task) return fail(`lane ${lane.name} has no task "${lineage.task}"`);
  const versions = versionMismatch(record);
  if (versions) return fail(versions);
  const model = isModelVariant(lineage.variant);
  const variants = everyVariant(lane);
  if (!model && variants && !variants.includes(lineage.variant)) return fail(`/provenance/lineage/variant: lane ${lane.name} runs no variant "${lineage.variant}"`);

  let actions;
  try {
    actions = recordedActions(record.messages);
  } catch (error) {
    return fail(errorMessage(error));
  }
  const policyActor = record.provenance.actors.find((actor) => actor.role === 'policy') as ConstructorParameters<typeof ReplayPolicy>[1];
  const outOfTime = record.result.outcome === 'wall_time_limit';
  let halt: WallTimeHalt | undefined;
  if (outOfTime) {
    halt = wallTimeHalt(record, lane.limits.wall_time_ms);
    if (!halt) return fail(`/result/outcome_detail: ${JSON.stringify(record.result.outcome_detail)} is not a reason the runner gives for running out of time`);
  }
  // Time cannot be derived again, so an episode that ran out of it is replayed from its actions.
  const derived = outOfTime ? undefined : options.derivePolicy?.(policyActor);
  const exhausted = record.result.outcome === 'policy_error' && record.result.outcome_detail ? record.result.outcome_detail : REPLAY_EXHAUSTED;
  const policyFor: PolicyFactory = derived ?? (() => new ReplayPolicy(actions, policyActor, exhausted));
  // A scripted user is derived again from the task's facts, so an edited reply is caught; a model's replies are replayed as recorded.
  const userActor = record.provenance.actors.find((actor) => actor.role === 'user') as ConstructorParameters<typeof ReplayUser>[1] | undefined;
  const userFor: UserFactory | undefined =
    userActor === undefined ? undefined : userActor.kind === 'scripted' && !outOfTime ? scriptedUserFor : () => new ReplayUser(recordedUserReplies(record.messages), userActor);

  let rebuilt: EpisodeRecord;
  try {
    const rollout = lineage.rollout === undefined ? {} : { rollout: lineage.rollout };
    const spec = model
      ? { lane, task, seed: lineage.seed, policy: lineage.variant, ...rollout }
      : lane.document.policy.draw === 'each'
        ? { lane, task, seed: lineage.seed, variant: lineage.variant, ...rollout }
        : { lane, task, seed: lineage.seed, ...rollout };
    rebuilt = await produceEpisode(spec, policyFor, {
      producedAt: record.provenance.produced_at,
      trace: options.trace,
      enforceWallTime: false,
      ...(halt ? { halt } : {}),
      ...(userFor ? { userFor } : {}),
    });
  } catch (error) {
    const stage = error instanceof TaskBindingError ? 'task parameters' : 'replay';
    return fail(`${stage} failed: ${errorMessage(error)}`);
  }

  // A record a dataset operation derived (dedup keeps it under its own id) is
  // the same episode: only its lineage says where it came from.
  if (lineage.operation !== 'generate') {
    if (lineage.source_record_id !== record.record_id) {
      return fail(`/provenance/lineage/source_record_id: a record derived by ${lineage.operation} keeps its id, so it must be "${record.record_id}"`);
    }
    rebuilt = { ...rebuilt, provenance: { ...rebuilt.provenance, lineage: { ...rebuilt.provenance.lineage, operation: lineage.operation, source_record_id: lineage.source_record_id } } };
  }
  // The bytes first: the same bytes are the same record, and the structural
  // diff is built only for a record whose bytes differ.
  if (options.text !== undefined) {
    enterPhase('serialisation');
    const rebuiltText = JSON.stringify(rebuilt);
    exitPhase('serialisation');
    if (rebuiltText === options.text) return { record_id: id, ok: true, problems: [] };
  }
  enterPhase('replay_compare');
  const equal = canonicalEquals(rebuilt, record);
  exitPhase('replay_compare');
  if (!equal) return fail(...explain(record, rebuilt));
  if (options.text !== undefined) {
    return fail('the line is not the record its replay writes: same values, different bytes (a repeated key, reordered fields or added whitespace)');
  }
  return { record_id: id, ok: true, problems: [] };
}

/** A record is replayed by the code that made it: name the difference instead of diffing every field. */
function versionMismatch(record: EpisodeRecord): string | undefined {
  const made = record.provenance.lineage.factory_version;
  const sdk = record.provenance.actors.find((actor) => actor.role === 'world')?.mcp_sdk;
  const current = `@modelcontextprotocol/sdk@${mcpSdkVersion()}`;
  const world = record.provenance.actors.find((actor) => actor.role === 'world');
  const served = world ? installedWorldMismatch(record.world.name, world) : undefined;
  if (served) return served;
  if (made === FACTORY_VERSION && (sdk === undefined || sdk === current)) return undefined;
  return (
    `made by episode-factory ${made}${sdk ? ` with ${String(sdk)}` : ''}, but this is episode-factory ${FACTORY_VERSION} with ${current}; ` +
    'replay it with the versions that made it (check out that release and run npm ci)'
  );
}

/** Where the original ran out of wall time, read from the runner's own reason for it. */
function wallTimeHalt(record: EpisodeRecord, limit: number): WallTimeHalt | undefined {
  const detail = record.result.outcome_detail;
  const beforeCall = detail?.startsWith(`${WALL_TIME_EXCEEDED(limit)} before executing `) ? detail.slice(`${WALL_TIME_EXCEEDED(limit)} before executing `.length) : undefined;
  if (beforeCall) return { before_executing: beforeCall };
  if (detail === WALL_TIME_EXCEEDED(limit)) return { before_turn: record.result.steps + 1 };
  if (detail === MODEL_TURN_PAST_WALL_TIME(limit)) return { during_turn: record.result.steps };
  if (detail === USER_TURN_PAST_WALL_TIME(limit)) return { during_user_turn: recordedUserReplies(record.messages).length + 1 };
  return undefined;
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
