// Owns the text form of a dataset's statistics (`episode-factory stats`
// without --json): aligned tables, histograms drawn as bars, and the one-line
// summaries of calls per turn and simulated user turns that the card quotes
// too.

import { formatRate, type Rate } from '../statistics/wilson-interval.js';
import type { DatasetStats, TurnStats } from './dataset-stats.js';
import type { GroupReliability, GroupStats } from './stats-groups.js';
import type { Distribution, HistogramBin } from './stats-distribution.js';

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
        ['problems', `${stats.problem_count}${stats.problem_count > 0 ? ' (corrupt, torn or invalid lines; not counted)' : ''}`],
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

  if (stats.groups) sections.push(groupsText(stats.groups));

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

const counted = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;

/** GRPO groups: their sizes and spread, then pass^k and pass@k overall and per task, k = 1 and the largest k given. */
function groupsText(groups: GroupStats): string {
  const sizes = Object.entries(groups.by_size).map(([size, count]) => `${count} of ${size}`).join(', ');
  const ks = Object.keys(groups.pass_hat_k);
  const shownK = [...new Set([ks[0]!, ks[ks.length - 1]!])];
  const row = (label: string, reliability: GroupReliability): string[] => [
    label,
    String(reliability.groups),
    String(reliability.zero_variance),
    ...shownK.flatMap((k) => [formatNumber(reliability.pass_hat_k[k] ?? null, 3), formatNumber(reliability.pass_at_k[k] ?? null, 3)]),
  ];
  return (
    `GRPO groups: ${counted(groups.groups, 'group')} of ${counted(groups.rollouts, 'rollout')} (${sizes}); ${groups.zero_variance} with zero reward variance (nothing for GRPO to learn), ` +
    `mean within-group variance ${groups.mean_within_group_variance.toFixed(3)}\n` +
    textTable([
      ['task', 'groups', 'zero variance', ...shownK.flatMap((k) => [`pass^${k}`, `pass@${k}`])],
      row('all', groups),
      ...Object.entries(groups.by_task).map(([task, reliability]) => row(task, reliability)),
    ])
  );
}
