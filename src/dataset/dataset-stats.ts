// Owns the statistics of a dataset, computed from its records alone: counts by
// world, task, variant, policy, outcome and fault kind; completion and
// recovery rates with Wilson intervals; episode length distributions;
// duplicate trajectories; and wording diversity per task. Every map is built
// in sorted key order so the JSON and the text are the same bytes for the
// same records.

import { DistinctCount, FingerprintTable, StringArena } from '../core/fingerprint-table.js';
import type { EpisodeRecord } from '../records/episode-record.js';
import { type Dataset, type DatasetProblem, type PassOptions, scanDataset } from './dataset-reader.js';
import { trajectoryHash } from './trajectory.js';
import { type Rate, wilsonInterval } from '../statistics/wilson-interval.js';
import { sortedRecord } from './key-order.js';
import { type Distribution, WholeNumbers } from './stats-distribution.js';
import { CountTally, RateTally } from './stats-tallies.js';
import { GroupTally, type GroupStats } from './stats-groups.js';

export const STATS_FORMAT = 'episode-factory.stats.v1';

/** Duplicate pairs named in the stats; the count is always complete. */
const MAX_DUPLICATE_EXAMPLES = 10;

export interface FaultKindStats {
  /** Times this kind fired, over all episodes. */
  fired: number;
  /** Episodes in which it fired at least once. */
  episodes: number;
  /** Of those episodes, the ones whose task was still completed. */
  completed: Rate;
}

export interface DuplicateExample {
  record_id: string;
  /** The earlier record with the same trajectory. */
  duplicate_of: string;
}

/**
 * How varied one task's episodes are: a task said one way with different
 * values is many messages but one phrasing; a phrasing grammar gives more.
 */
export interface TaskWording {
  records: number;
  /** Distinct first user messages, word for word (parameter values included). */
  user_messages: number;
  /** Distinct phrasings of the message (provenance.lineage.phrasing per lane); a one-sentence message is one. */
  phrasings: number;
  /** Distinct trajectories (the normalised conversation that dedup and duplicates compare). */
  trajectories: number;
}

export interface DatasetStats {
  format: typeof STATS_FORMAT;
  records: number;
  /** Torn, corrupt or invalid lines of the file, which no statistic counts. */
  /** The first 100 unreadable lines; `problem_count` counts them all. */
  problems: DatasetProblem[];
  problem_count: number;
  counts: {
    /** `name@version`. */
    by_world: Record<string, number>;
    by_task: Record<string, number>;
    /** provenance.lineage.variant. */
    by_variant: Record<string, number>;
    /** Policy actors as `kind:name@version`, each counted once per record. */
    by_policy: Record<string, number>;
    by_outcome: Record<string, number>;
  };
  faults: {
    fired: number;
    episodes_with_fault: number;
    by_kind: Record<string, FaultKindStats>;
  };
  completion: {
    overall: Rate;
    by_task: Record<string, Rate>;
    by_variant: Record<string, Rate>;
  };
  /**
   * Among episodes with at least one error turn or fired fault, the share the
   * record marks recovered (the task was still completed).
   */
  recovery: Rate;
  lengths: {
    messages: Distribution;
    /** Tool calls the policy emitted in its messages, including ones rejected by validation. */
    tool_calls: Distribution;
  };
  /** How the conversations are shaped: several tool calls in one assistant turn, and a user simulator's replies. */
  turns: TurnStats;
  duplicates: {
    /** Records whose trajectory equals an earlier record's. */
    duplicates: number;
    distinct_trajectories: number;
    examples: DuplicateExample[];
  };
  wording: {
    by_task: Record<string, TaskWording>;
  };
  /** GRPO groups (records with a group_id and a rollout): pass^k, pass@k and the reward's spread within groups. Absent when no record is in one. */
  groups?: GroupStats;
}

/** The first thing the user said: what a phrasing grammar varies. */
export function firstUserMessage(record: EpisodeRecord): string | undefined {
  return record.messages.find((message) => message.role === 'user')?.content;
}

export interface TurnStats {
  /** Assistant turns with at least one tool call (a malformed call names none, so it is not one). */
  with_calls: number;
  /** Turns with calls, by how many calls each made: `{"1": 120, "2": 14}`. */
  calls_per_turn: Record<string, number>;
  /** Turns with more than one call, and the episodes that have one. */
  with_several_calls: number;
  episodes_with_several_calls: number;
  /** User messages after the opening request: replies of the user simulator, which a trainer masks. */
  simulated_user: number;
  episodes_with_simulated_user: number;
  /** User simulator actors as `kind:name@version`, each counted once per record that names one. */
  by_user_simulator: Record<string, number>;
}

function actorKeys(record: EpisodeRecord, role: string): string[] {
  return record.provenance.actors
    .filter((actor) => actor.role === role)
    .map((actor) => `${String(actor.kind)}:${String(actor.name)}@${String(actor.version)}`);
}

export function toolCallCount(record: EpisodeRecord): number {
  let calls = 0;
  for (const message of record.messages) {
    if (message.role === 'assistant') calls += message.tool_calls?.length ?? 0;
  }
  return calls;
}

/**
 * The statistics built one record at a time, so a caller that streams a large
 * file (the report) holds only tallies, not the records.
 */
export class StatsAccumulator {
  private records = 0;
  private readonly byWorld = new CountTally();
  private readonly byTask = new CountTally();
  private readonly byVariant = new CountTally();
  private readonly byPolicy = new CountTally();
  private readonly byOutcome = new CountTally();
  private readonly faultKinds = new Map<string, { fired: number; episodes: number; completed: number }>();
  private faultsFired = 0;
  private episodesWithFault = 0;
  private completed = 0;
  private readonly completionByTask = new RateTally();
  private readonly completionByVariant = new RateTally();
  private troubled = 0;
  private recovered = 0;
  private readonly messageLengths = new WholeNumbers();
  private readonly toolCallLengths = new WholeNumbers();
  private readonly callsPerTurn = new Map<number, number>();
  private episodesWithSeveralCalls = 0;
  private simulatedUser = 0;
  private episodesWithSimulatedUser = 0;
  private readonly byUserSimulator = new CountTally();
  /** Each trajectory's fingerprint with the first record that had it (its id kept in `firstIds`): 24 bytes and the id's a distinct trajectory. */
  private readonly firstWithHash = new FingerprintTable();
  private readonly firstIds = new StringArena();
  private duplicates = 0;
  private readonly duplicateExamples: DuplicateExample[] = [];
  /** Per task, distinct counts by fingerprint, so a large dataset holds no message text and a few bytes a record. */
  private readonly wordings = new Map<string, { records: number; messages: DistinctCount; phrasings: Set<string>; trajectories: DistinctCount }>();
  private readonly groups = new GroupTally();

  add(record: EpisodeRecord): void {
    this.records++;
    const completed = record.result.task_completed;
    const variant = record.provenance.lineage.variant;
    this.byWorld.add([`${record.world.name}@${record.world.version}`]);
    this.byTask.add([record.task.id]);
    this.byVariant.add([variant]);
    this.byPolicy.add(actorKeys(record, 'policy'));
    this.byOutcome.add([record.result.outcome]);
    this.addFaults(record);
    if (completed) this.completed++;
    this.completionByTask.add(record.task.id, completed);
    this.completionByVariant.add(variant, completed);
    if (record.recovery.error_turns > 0 || record.recovery.faults_fired.length > 0) {
      this.troubled++;
      if (record.recovery.recovered) this.recovered++;
    }
    this.messageLengths.add(record.messages.length);
    this.toolCallLengths.add(toolCallCount(record));
    this.addTurns(record);
    this.addTrajectory(record);
    this.groups.add(record);
  }

  private addTurns(record: EpisodeRecord): void {
    let several = false;
    let users = 0;
    for (const message of record.messages) {
      if (message.role === 'user') users++;
      if (message.role !== 'assistant' || !message.tool_calls || message.tool_calls.length === 0) continue;
      const calls = message.tool_calls.length;
      this.callsPerTurn.set(calls, (this.callsPerTurn.get(calls) ?? 0) + 1);
      if (calls > 1) several = true;
    }
    if (several) this.episodesWithSeveralCalls++;
    // The first user message is the task's request; every later one is the simulator's reply.
    const simulated = Math.max(0, users - 1);
    this.simulatedUser += simulated;
    if (simulated > 0) this.episodesWithSimulatedUser++;
    this.byUserSimulator.add(actorKeys(record, 'user'));
  }

  private turnStats(): TurnStats {
    const counts = [...this.callsPerTurn.entries()].sort(([left], [right]) => left - right);
    return {
      with_calls: counts.reduce((total, [, turns]) => total + turns, 0),
      // Integer-like keys keep numeric order in every JSON engine, so "10" follows "9".
      calls_per_turn: Object.fromEntries(counts.map(([calls, turns]) => [String(calls), turns])),
      with_several_calls: counts.reduce((total, [calls, turns]) => total + (calls > 1 ? turns : 0), 0),
      episodes_with_several_calls: this.episodesWithSeveralCalls,
      simulated_user: this.simulatedUser,
      episodes_with_simulated_user: this.episodesWithSimulatedUser,
      by_user_simulator: this.byUserSimulator.counted(),
    };
  }

  private addFaults(record: EpisodeRecord): void {
    const faults = record.recovery.faults_fired;
    this.faultsFired += faults.length;
    if (faults.length > 0) this.episodesWithFault++;
    for (const fault of faults) {
      const tally = this.faultKinds.get(fault.kind) ?? { fired: 0, episodes: 0, completed: 0 };
      tally.fired++;
      this.faultKinds.set(fault.kind, tally);
    }
    for (const kind of new Set(faults.map((fault) => fault.kind))) {
      const tally = this.faultKinds.get(kind)!;
      tally.episodes++;
      if (record.result.task_completed) tally.completed++;
    }
  }

  private addTrajectory(record: EpisodeRecord): void {
    const hash = trajectoryHash(record);
    this.addWording(record, hash);
    const first = this.firstWithHash.getOrAdd(hash, this.firstWithHash.size);
    if (first === undefined) {
      this.firstIds.add(record.record_id);
      return;
    }
    this.duplicates++;
    if (this.duplicateExamples.length < MAX_DUPLICATE_EXAMPLES) this.duplicateExamples.push({ record_id: record.record_id, duplicate_of: this.firstIds.get(first) });
  }

  private addWording(record: EpisodeRecord, trajectory: string): void {
    const wording = this.wordings.get(record.task.id) ?? { records: 0, messages: new DistinctCount(), phrasings: new Set(), trajectories: new DistinctCount() };
    wording.records++;
    wording.messages.add(firstUserMessage(record) ?? '');
    const { lane, phrasing } = record.provenance.lineage;
    wording.phrasings.add(`${lane}\u0000${phrasing ?? ''}`);
    wording.trajectories.addHash(trajectory);
    this.wordings.set(record.task.id, wording);
  }

  finish(problems: readonly DatasetProblem[], problemCount = problems.length): DatasetStats {
    const byKind = new Map<string, FaultKindStats>();
    for (const [kind, tally] of this.faultKinds) {
      byKind.set(kind, { fired: tally.fired, episodes: tally.episodes, completed: wilsonInterval(tally.completed, tally.episodes) });
    }
    const groups = this.groups.finish();
    return {
      format: STATS_FORMAT,
      records: this.records,
      problems: problems.map((problem) => ({ ...problem })),
      problem_count: problemCount,
      counts: {
        by_world: this.byWorld.counted(),
        by_task: this.byTask.counted(),
        by_variant: this.byVariant.counted(),
        by_policy: this.byPolicy.counted(),
        by_outcome: this.byOutcome.counted(),
      },
      faults: { fired: this.faultsFired, episodes_with_fault: this.episodesWithFault, by_kind: sortedRecord(byKind) },
      completion: {
        overall: wilsonInterval(this.completed, this.records),
        by_task: this.completionByTask.rates(),
        by_variant: this.completionByVariant.rates(),
      },
      recovery: wilsonInterval(this.recovered, this.troubled),
      lengths: {
        messages: this.messageLengths.distribution(),
        tool_calls: this.toolCallLengths.distribution(),
      },
      turns: this.turnStats(),
      duplicates: { duplicates: this.duplicates, distinct_trajectories: this.firstWithHash.size, examples: [...this.duplicateExamples] },
      wording: {
        by_task: sortedRecord(
          new Map(
            [...this.wordings].map(([task, wording]) => [
              task,
              { records: wording.records, user_messages: wording.messages.size, phrasings: wording.phrasings.size, trajectories: wording.trajectories.size },
            ]),
          ),
        ),
      },
      ...(groups ? { groups } : {}),
    };
  }
}

/** Statistics of the records in file order; pure, so the same records give the same object. */
export function computeStats(dataset: Dataset): DatasetStats {
  const accumulator = new StatsAccumulator();
  for (const row of dataset.rows) accumulator.add(row.record);
  return accumulator.finish(dataset.problems);
}

/** The same, streamed from a dataset directory one record at a time. */
export async function datasetStats(dir: string, options: PassOptions = {}): Promise<DatasetStats> {
  const accumulator = new StatsAccumulator();
  const pass = await scanDataset(dir, (row) => accumulator.add(row.record), options);
  return accumulator.finish(pass.problems, pass.problemCount);
}
