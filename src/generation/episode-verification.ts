// Owns turning one planned episode into what the dataset keeps of it: produce
// it, validate it against the record schema, replay it from its own
// serialized line on a fresh world, and come out with either a record line for
// episodes.jsonl or a row for rejected.jsonl with the stage and reason. An
// episode cut short by its infrastructure (the model server failed) is a row
// of stage `infra`: kept apart, never a record. The episode's trace goes to
// the output it is given (its part's trace archive), each event naming it.

import { errorMessage } from '../core/errors.js';
import { enterPhase, exitPhase } from '../core/phase-profile.js';
import { specRecordId, type EpisodeSpec } from '../lanes/episode-plan.js';
import { TaskBindingError } from '../lanes/task-instance.js';
import { InfrastructureError } from '../policy/policy-contract.js';
import type { EpisodeRecord, RejectedRow } from '../records/episode-record.js';
import { validateAgainst } from '../records/schema-registry.js';
import { Trace, type TraceOutput } from '../runner/trace.js';
import { produceEpisode, type PolicyFactory, type UserFactory } from '../verify/episode-production.js';
import { replayRecord } from '../verify/replay.js';

export interface VerificationContext {
  policy: PolicyFactory;
  /** Who plays the user of tasks with facts; the scripted user when absent. */
  userFor?: UserFactory;
  producedAt: string;
  runId: string;
}

/** What verifying one episode came to: a record to write, or a row for rejected.jsonl. */
export type EpisodeResult =
  /** `stored` is the line parsed back, as a reader of episodes.jsonl sees the record (the columnar copies are built from it). */
  | { status: 'written'; id: string; record: EpisodeRecord; line: string; stored: EpisodeRecord }
  | { status: 'rejected'; id: string; row: RejectedRow };

export async function verifyEpisode(spec: EpisodeSpec, context: VerificationContext, traceOutput: TraceOutput | undefined): Promise<EpisodeResult> {
  const id = specRecordId(spec);
  const lane = spec.lane;
  const trace = new Trace(context.runId, traceOutput, undefined, { recordId: id });
  const reject = (stage: RejectedRow['stage'], reason: string, record: EpisodeRecord | null): EpisodeResult => {
    trace.phase('verify').emit('record_rejected', { stage, reason });
    return { status: 'rejected', id, row: { record_id: id, lane: lane.name, task: spec.task.id, seed: spec.seed, stage, reason, record } };
  };
  enterPhase('episode');
  try {
    const record = await produceEpisode(spec, context.policy, { producedAt: context.producedAt, trace: trace.phase('generate'), ...(context.userFor ? { userFor: context.userFor } : {}) });
    enterPhase('serialisation');
    const line = JSON.stringify(record);
    exitPhase('serialisation');
    enterPhase('validation');
    const schemaErrors = validateAgainst('episode-record.v1', record);
    exitPhase('validation');
    if (schemaErrors.length > 0) return reject('schema', schemaErrors.map((error) => `${error.path || '/'}: ${error.reason}`).join('; '), record);
    // Replay what will be stored, not the object in memory: a value that
    // does not survive JSON serialization must fail here, not later. The
    // schema was checked just above on the value the line was written from,
    // so replay does not check it again on the line's parse.
    enterPhase('replay');
    let verdict;
    let stored: EpisodeRecord;
    try {
      enterPhase('serialisation');
      stored = JSON.parse(line) as EpisodeRecord;
      exitPhase('serialisation');
      verdict = await replayRecord(stored, lane, { trace: trace.phase('replay'), text: line, schemaChecked: true });
    } finally {
      exitPhase('replay');
    }
    if (!verdict.ok) return reject('replay', verdict.problems.join('; '), record);
    trace.phase('verify').emit('record_written', { task_completed: record.result.task_completed });
    return { status: 'written', id, record, line, stored };
  } catch (error) {
    return reject(error instanceof TaskBindingError ? 'plan' : error instanceof InfrastructureError ? 'infra' : 'run', errorMessage(error), null);
  } finally {
    enterPhase('writing');
    trace.close();
    exitPhase('writing');
    exitPhase('episode');
  }
}
