// Owns producing one part of a run: the episodes of a contiguous range of the
// plan, verified a few at a time, kept in plan order, and sealed as a part.
// The same code runs on the main thread and inside a worker thread. Asked to
// stop, it finishes the episodes in flight and seals the prefix it has, so an
// interrupted run keeps every episode it finished. When the run writes Arrow
// or Parquet, the part's rows are built into Arrow columns here, where the
// records are, and sealed beside its JSONL; the main thread only joins them.
// Every episode's trace goes into the part's one trace archive.

import { inPhase, inPhaseAsync } from '../core/phase-profile.js';
import type { EpisodePlan } from '../lanes/episode-plan.js';
import { RecordBatchBuilder } from '../records/arrow-builders.js';
import { recordToRow } from '../records/arrow-schema.js';
import { ipcStream } from '../records/arrow-ipc.js';
import { verifyEpisode, type EpisodeResult, type VerificationContext } from './episode-verification.js';
import { PartTraceArchive } from './part-trace-archive.js';
import { writePart, type PartSummary } from './run-parts.js';

export interface PartContext extends VerificationContext {
  plan: EpisodePlan;
  staging: string;
  /** Episodes in flight at once within the part. */
  concurrency: number;
  /** Build the part's Arrow columns (the run writes Arrow or Parquet). */
  columnar?: boolean;
  /**
   * Write the part's trace archive when the part is sealed instead of event by
   * event: right for scripted episodes, which take milliseconds and which
   * --resume reruns after a crash; a model's episodes are worth watching as
   * they happen.
   */
  traceOnClose?: boolean;
}

export interface EpisodeOutcome {
  record_id: string;
  /** infra: the model server failed; the row is in rejected.jsonl, apart from the records. */
  status: 'written' | 'rejected' | 'infra';
  task_completed: boolean;
}

export interface PartHooks {
  shouldStop(): boolean;
  onEpisode(outcome: EpisodeOutcome): void;
}

/** Runs [start, end) and seals what it finished; undefined when it was stopped before finishing any. */
export async function producePart(context: PartContext, start: number, end: number, hooks: PartHooks): Promise<PartSummary | undefined> {
  return inPhaseAsync('part', () => producePartRange(context, start, end, hooks));
}

async function producePartRange(context: PartContext, start: number, end: number, hooks: PartHooks): Promise<PartSummary | undefined> {
  const episodeLines: string[] = [];
  const rejectedLines: string[] = [];
  const summary: Omit<PartSummary, 'files' | 'end'> & Required<Pick<PartSummary, 'infra_errors' | 'infra_failures'>> = {
    start,
    written: 0,
    rejected: 0,
    completed: 0,
    faults_fired: {},
    rejections: [],
    infra_errors: 0,
    infra_failures: [],
  };
  const columns = context.columnar ? new RecordBatchBuilder() : undefined;
  const archive = new PartTraceArchive(context.staging, start, end, !context.traceOnClose);
  const pending = new Map<number, Promise<EpisodeResult>>();
  let next = start;
  let finished = start;
  try {
    while (finished < end) {
      while (next < end && pending.size < context.concurrency && !hooks.shouldStop()) {
        pending.set(next, verifyEpisode(context.plan.at(next), context, archive.output()));
        next++;
      }
      const result = pending.get(finished);
      if (!result) break;
      pending.delete(finished);
      keep(await result);
      finished++;
      // A scripted episode never leaves the microtask queue, so without this a
      // Ctrl-C (or a worker's stop message) would only be seen after the run.
      await new Promise((resolve) => setImmediate(resolve));
    }
  } catch (error) {
    archive.abandon();
    throw error;
  }
  if (finished === start) {
    archive.abandon();
    return undefined;
  }
  const arrow = columns && inPhase('columnar', () => ipcStream(columns.finishBatch()));
  // Every episode started was awaited above, so the archive holds exactly the episodes of [start, finished).
  return inPhase('writing', () => writePart(context.staging, { ...summary, end: finished }, episodeLines, rejectedLines, archive.seal(finished), arrow));

  function keep(result: EpisodeResult): void {
    let taskCompleted = false;
    let status: EpisodeOutcome['status'] = result.status;
    if (result.status === 'written') {
      episodeLines.push(result.line);
      if (columns) inPhase('columnar', () => columns.append(recordToRow(result.stored)));
      summary.written++;
      taskCompleted = result.record.result.task_completed;
      if (taskCompleted) summary.completed++;
      for (const fault of result.record.recovery.faults_fired) summary.faults_fired[fault.kind] = (summary.faults_fired[fault.kind] ?? 0) + 1;
    } else {
      rejectedLines.push(JSON.stringify(result.row));
      const rejection = { record_id: result.id, stage: result.row.stage, reason: result.row.reason };
      if (result.row.stage === 'infra') {
        status = 'infra';
        summary.infra_errors++;
        summary.infra_failures.push(rejection);
      } else {
        summary.rejected++;
        summary.rejections.push(rejection);
      }
    }
    hooks.onEpisode({ record_id: result.id, status, task_completed: taskCompleted });
  }
}
