// Owns the statistics of a dataset, computed from its records alone: counts by
// world, task, variant, policy, outcome and fault kind; completion and
// recovery rates with Wilson intervals; episode length distributions;
// duplicate trajectories; and wording diversity per task. Every map is built
// in sorted key order so the JSON and the text are the same bytes for the
// same records.

import { sha256Hex } from '../core/hashing.js';
import type { EpisodeRecord } from '../records/episode-record.js';
import type { Dataset, DatasetProblem } from './dataset-reader.js';
import { trajectoryHash } from './trajectory.js';
import { formatRate, type Rate, wilsonInterval } from '../statistics/wilson-interval.js';

export const STATS_FORMAT = 'episode-factory.stats.v1';

/** At most this many histogram bins, so the text table stays a glance. */
const MAX_HISTOGRAM_BINS = 10;
/** Duplicate pairs named in the stats; the count is always complete. */
const MAX_DUPLICATE_EXAMPLES = 10;

/** Integer values from..to, both inclusive. */
export interface HistogramBin {
  from: number;
  to: number;
  count: number;
}

export interface Distribution {
  count: number;
  /** Null when there are no records. Percentiles are nearest-rank, so each is a value that occurs. */
  min: number | null;
  p50: number | null;
  p90: number | null;
  max: number | null;
  mean: number | null;
  histogram: HistogramBin[];
}

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
  problems: DatasetProblem[];
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

/** Code-unit order: the same on every machine, unlike localeCompare. */
export function compareKeys(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}

function sortedRecord<T>(entries: Map<string, T>): Record<string, T> {
  const out: Record<string, T> = {};
  for (const key of [...entries.keys()].sort(compareKeys)) out[key] = entries.get(key)!;
  return out;
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

/** Nearest-rank percentile of sorted values: the smallest value with at least q of the sample at or below it. */
function nearestRank(sorted: readonly number[], q: number): number {
  const rank = Math.max(1, Math.ceil(q * sorted.length));
  return sorted[rank - 1]!;
}

export function distribution(values: readonly number[]): Distribution {
  if (values.length === 0) return { count: 0, min: null, p50: null, p90: null, max: null, mean: null, histogram: [] };
  const sorted = [...values].sort((left, right) => left - right);
  const min = sorted[0]!;
  const max = sorted[sorted.length - 1]!;
  const width = Math.max(1, Math.ceil((max - min + 1) / MAX_HISTOGRAM_BINS));
  const histogram: HistogramBin[] = [];
  for (let from = min; from <= max; from += width) histogram.push({ from, to: from + width - 1, count: 0 });
  for (const value of sorted) histogram[Math.floor((value - min) / width)]!.count++;
  const sum = sorted.reduce((total, value) => total + value, 0);
  return { count: sorted.length, min, p50: nearestRank(sorted, 0.5), p90: nearestRank(sorted, 0.9), max, mean: sum / sorted.length, histogram };
}

/** Successes out of n per key, turned into Wilson rates at the end. */
export class RateTally {
  private readonly tallies = new Map<string, { successes: number; n: number }>();

  add(key: string, success: boolean): void {
    const tally = this.tallies.get(key) ?? { successes: 0, n: 0 };
    tally.n++;
    if (success) tally.successes++;
    this.tallies.set(key, tally);
  }

  rates(): Record<string, Rate> {
    const rates = new Map<string, Rate>();
    for (const [key, tally] of this.tallies) rates.set(key, wilsonInterval(tally.successes, tally.n));
    return sortedRecord(rates);
  }
}

class CountTally {
  private readonly counts = new Map<string, number>();

  /** Each distinct key once per record. */
  add(keys: Iterable<string>): void {
    for (const key of new Set(keys)) this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  counted(): Record<string, number> {
    return sortedRecord(this.counts);
  }
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
  private readonly messageLengths: number[] = [];
  private readonly toolCallLengths: number[] = [];
  private readonly callsPerTurn = new Map<number, number>();
  private episodesWithSeveralCalls = 0;
  private simulatedUser = 0;
  private episodesWithSimulatedUser = 0;
  private readonly byUserSimulator = new CountTally();
  private readonly firstWithHash = new Map<string, string>();
  private duplicates = 0;
  private readonly duplicateExamples: DuplicateExample[] = [];
  /** Per task, sets of short hashes, so a large dataset holds no message text. */
  private readonly wordings = new Map<string, { records: number; messages: Set<string>; phrasings: Set<string>; trajectories: Set<string> }>();

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
    this.messageLengths.push(record.messages.length);
    this.toolCallLengths.push(toolCallCount(record));
    this.addTurns(record);
    this.addTrajectory(record);
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
    const first = this.firstWithHash.get(hash);
    if (first === undefined) {
      this.firstWithHash.set(hash, record.record_id);
      return;
    }
    this.duplicates++;
    if (this.duplicateExamples.length < MAX_DUPLICATE_EXAMPLES) this.duplicateExamples.push({ record_id: record.record_id, duplicate_of: first });
  }

  private addWording(record: EpisodeRecord, trajectory: string): void {
    const wording = this.wordings.get(record.task.id) ?? { records: 0, messages: new Set(), phrasings: new Set(), trajectories: new Set() };
    wording.records++;
    wording.messages.add(sha256Hex(firstUserMessage(record) ?? '').slice(0, 24));
    const { lane, phrasing } = record.provenance.lineage;
    wording.phrasings.add(`${lane}\u0000${phrasing ?? ''}`);
    wording.trajectories.add(trajectory);
    this.wordings.set(record.task.id, wording);
  }

  finish(problems: readonly DatasetProblem[]): DatasetStats {
    const byKind = new Map<string, FaultKindStats>();
    for (const [kind, tally] of this.faultKinds) {
      byKind.set(kind, { fired: tally.fired, episodes: tally.episodes, completed: wilsonInterval(tally.completed, tally.episodes) });
    }
    return {
      format: STATS_FORMAT,
      records: this.records,
      problems: problems.map((problem) => ({ ...problem })),
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
        messages: distribution(this.messageLengths),
        tool_calls: distribution(this.toolCallLengths),
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
    };
  }
}

/** Statistics of the records in file order; pure, so the same records give the same object. */
export function computeStats(dataset: Dataset): DatasetStats {
  const accumulator = new StatsAccumulator();
  for (const row of dataset.rows) accumulator.add(row.record);
  return accumulator.finish(dataset.problems);
}

/** Left-aligned columns separated by two spaces; the last column is not padded. */
function textTable(rows: readonly (readonly string[])[], indent = '  '): string {
  if (rows.length === 0) return '';
  const columns = Math.max(...rows.map((row) => row.length));
  const widths = Array.from({ length: columns }, (_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length)));
  return rows
    .map((row) => indent + row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  ').trimEnd())
    .join('\n') + '\n';
}

function formatNumber(value: number | null, digits = 0): string {
  return value === null ? '-' : value.toFixed(digits);
}

export function binLabel(bin: HistogramBin): string {
  return bin.from === bin.to ? String(bin.from) : `${bin.from}-${bin.to}`;
}

/** Bars scaled to the largest bin, so the shape reads at a glance whatever the dataset size. */
function histogramText(title: string, distribution: Distribution): string {
  const largest = Math.max(0, ...distribution.histogram.map((bin) => bin.count));
  const bar = (count: number): string => '#'.repeat(largest === 0 ? 0 : Math.round((count / largest) * 30));
  return `${title}\n` + textTable(distribution.histogram.map((bin) => [binLabel(bin), String(bin.count), bar(bin.count)]));
}

/** `1.12 mean over 130 turns with calls; 14 turns with several (up to 3) in 12 episodes`. */
export function callsPerTurnText(turns: TurnStats): string {
  const entries = Object.entries(turns.calls_per_turn).map(([calls, count]) => [Number(calls), count] as const);
  if (turns.with_calls === 0) return 'no turn called a tool';
  const mean = entries.reduce((total, [calls, count]) => total + calls * count, 0) / turns.with_calls;
  const most = Math.max(...entries.map(([calls]) => calls));
  return (
    `${mean.toFixed(2)} mean over ${turns.with_calls} turns with calls; ` +
    (turns.with_several_calls === 0
      ? 'none with several'
      : `${turns.with_several_calls} turns with several (up to ${most}) in ${turns.episodes_with_several_calls} episodes`)
  );
}

/** `40 replies in 32 episodes (user messages after the first), from scripted:scripted-user@1`. */
export function simulatedUserText(turns: TurnStats): string {
  const simulators = Object.keys(turns.by_user_simulator);
  if (turns.simulated_user === 0 && simulators.length === 0) return 'none (no user simulator)';
  return (
    `${turns.simulated_user} replies in ${turns.episodes_with_simulated_user} episodes (user messages after the first)` +
    (simulators.length > 0 ? `, from ${simulators.join(', ')}` : '')
  );
}

/** Human-readable text tables; rates read `0.688 [0.580, 0.778] n=80`. */
export function formatStats(stats: DatasetStats): string {
  const duplicateLines = stats.duplicates.examples.map((example) => `  duplicate: ${example.record_id} = ${example.duplicate_of}\n`).join('');
  const sections: string[] = [];
  sections.push(
    textTable(
      [
        ['records', String(stats.records)],
        ['problems', `${stats.problems.length}${stats.problems.length > 0 ? ' (corrupt, torn or invalid lines; not counted)' : ''}`],
        ['task completion', formatRate(stats.completion.overall)],
        ['recovery', `${formatRate(stats.recovery)} (recovered, among episodes with an error turn or a fired fault)`],
        ['duplicates', `${stats.duplicates.duplicates} duplicate records, ${stats.duplicates.distinct_trajectories} distinct trajectories`],
        ['calls per turn', callsPerTurnText(stats.turns)],
        ['simulated user', simulatedUserText(stats.turns)],
      ],
      '',
    ) + duplicateLines,
  );

  const rateRows = (label: string, rates: Record<string, Rate>): string[][] => [
    [label, 'records', 'completed', 'completion'],
    ...Object.entries(rates).map(([key, rate]) => [key, String(rate.n), String(rate.successes), formatRate(rate)]),
  ];
  sections.push('by task\n' + textTable(rateRows('task', stats.completion.by_task)));
  sections.push('by variant\n' + textTable(rateRows('variant', stats.completion.by_variant)));
  sections.push(
    'wording by task (distinct first user messages, phrasings and trajectories)\n' +
      textTable([
        ['task', 'records', 'user messages', 'phrasings', 'trajectories'],
        ...Object.entries(stats.wording.by_task).map(([task, wording]) => [
          task,
          String(wording.records),
          String(wording.user_messages),
          String(wording.phrasings),
          String(wording.trajectories),
        ]),
      ]),
  );

  const countRows = (label: string, counts: Record<string, number>): string[][] => [
    [label, 'records'],
    ...Object.entries(counts).map(([key, count]) => [key, String(count)]),
  ];
  sections.push('by world\n' + textTable(countRows('world', stats.counts.by_world)));
  sections.push('by policy\n' + textTable(countRows('policy', stats.counts.by_policy)));
  sections.push('by outcome\n' + textTable(countRows('outcome', stats.counts.by_outcome)));

  const kinds = Object.entries(stats.faults.by_kind);
  sections.push(
    `faults: ${stats.faults.fired} fired in ${stats.faults.episodes_with_fault} episodes, ${kinds.length} kinds\n` +
      (kinds.length === 0
        ? ''
        : textTable([
            ['kind', 'fired', 'episodes', 'still completed'],
            ...kinds.map(([kind, fault]) => [kind, String(fault.fired), String(fault.episodes), formatRate(fault.completed)]),
          ])),
  );

  const lengthRow = (label: string, value: Distribution): string[] => [
    label,
    formatNumber(value.min),
    formatNumber(value.p50),
    formatNumber(value.p90),
    formatNumber(value.max),
    formatNumber(value.mean, 2),
  ];
  sections.push(
    'episode length\n' +
      textTable([
        ['per episode', 'min', 'p50', 'p90', 'max', 'mean'],
        lengthRow('messages', stats.lengths.messages),
        lengthRow('tool calls', stats.lengths.tool_calls),
      ]),
  );
  sections.push(histogramText('messages per episode', stats.lengths.messages));
  sections.push(histogramText('tool calls per episode', stats.lengths.tool_calls));
  return sections.join('\n');
}
