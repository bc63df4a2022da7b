// Owns the statistics of GRPO groups: records that carry a group_id and a
// rollout (K rollouts of the same task, seed and agent, as `env serve` keeps
// them), tallied per group, then pass^k (the chance that k rollouts drawn from
// a group all succeed: τ-bench's reliability measure) and pass@k (that at
// least one does) per task and overall, and the spread of the reward within
// each group, since a group whose rollouts all scored the same gives GRPO no
// advantage to learn from. Success is the reward env serve gives: every hidden
// predicate passed. Only grouped records are held, a few dozen bytes a group.

import { everyPredicatePassed, type EpisodeRecord } from '../records/episode-record.js';
import { compareKeys, sortedRecord } from './key-order.js';

/** pass^k and pass@k are given for k up to this, or up to the smallest group when that is smaller. */
export const MAX_REPORTED_K = 16;

export interface GroupReliability {
  groups: number;
  /** Groups whose rollouts all got the same reward. */
  zero_variance: number;
  /** By k ("1", "2", ...): the mean over groups of C(c, k) / C(n, k), for n rollouts of which c succeeded. */
  pass_hat_k: Record<string, number>;
  /** By k: the mean over groups of 1 - C(n - c, k) / C(n, k). */
  pass_at_k: Record<string, number>;
}

export interface GroupStats extends GroupReliability {
  /** Records that belong to a group. */
  rollouts: number;
  /** Groups by their number of rollouts: `{"4": 12}`. */
  by_size: Record<string, number>;
  /** The mean over groups of the reward's variance within the group (p(1 - p) for a share p of successes). */
  mean_within_group_variance: number;
  by_task: Record<string, GroupReliability>;
}

/** C(successes, k) / C(n, k): the chance that k of n rollouts drawn without replacement all succeeded. */
export function passHatK(n: number, successes: number, k: number): number {
  let chance = 1;
  for (let index = 0; index < k; index++) chance *= (successes - index) / (n - index);
  return Math.max(0, chance);
}

/** 1 - C(n - successes, k) / C(n, k): the chance that at least one of k drawn rollouts succeeded. */
export function passAtK(n: number, successes: number, k: number): number {
  return 1 - passHatK(n, n - successes, k);
}

/** Four decimals: the same bytes for the same counts on every machine. */
const rounded = (value: number) => Math.round(value * 10_000) / 10_000;

interface Tally {
  task: string;
  n: number;
  successes: number;
}

function reliability(groups: readonly Tally[]): GroupReliability {
  // A loop, not Math.min(...sizes): a spread of every group overflows the stack past some 100,000 of them.
  let largestK = MAX_REPORTED_K;
  for (const group of groups) largestK = Math.min(largestK, group.n);
  const passHat: Record<string, number> = {};
  const passAt: Record<string, number> = {};
  for (let k = 1; k <= largestK; k++) {
    passHat[String(k)] = rounded(groups.reduce((total, group) => total + passHatK(group.n, group.successes, k), 0) / groups.length);
    passAt[String(k)] = rounded(groups.reduce((total, group) => total + passAtK(group.n, group.successes, k), 0) / groups.length);
  }
  return {
    groups: groups.length,
    zero_variance: groups.filter((group) => group.successes === 0 || group.successes === group.n).length,
    pass_hat_k: passHat,
    pass_at_k: passAt,
  };
}

export class GroupTally {
  private readonly groups = new Map<string, Tally>();
  private rollouts = 0;

  add(record: EpisodeRecord): void {
    const { group_id: groupId, rollout } = record.provenance.lineage;
    if (groupId === undefined || rollout === undefined) return;
    this.rollouts++;
    const tally = this.groups.get(groupId) ?? { task: record.task.id, n: 0, successes: 0 };
    tally.n++;
    if (everyPredicatePassed(record)) tally.successes++;
    this.groups.set(groupId, tally);
  }

  /** Undefined when no record belongs to a group. */
  finish(): GroupStats | undefined {
    if (this.groups.size === 0) return undefined;
    const all = [...this.groups.keys()].sort(compareKeys).map((key) => this.groups.get(key)!);
    const sizes = new Map<number, number>();
    for (const group of all) sizes.set(group.n, (sizes.get(group.n) ?? 0) + 1);
    const byTask = new Map<string, Tally[]>();
    for (const group of all) {
      const list = byTask.get(group.task);
      if (list) list.push(group);
      else byTask.set(group.task, [group]);
    }
    const variance = (group: Tally) => (group.successes / group.n) * (1 - group.successes / group.n);
    const overall = reliability(all);
    return {
      groups: overall.groups,
      rollouts: this.rollouts,
      // Integer-like keys keep numeric order in every JSON engine.
      by_size: Object.fromEntries([...sizes].sort(([left], [right]) => left - right).map(([size, count]) => [String(size), count])),
      zero_variance: overall.zero_variance,
      mean_within_group_variance: rounded(all.reduce((total, group) => total + variance(group), 0) / all.length),
      pass_hat_k: overall.pass_hat_k,
      pass_at_k: overall.pass_at_k,
      by_task: sortedRecord(new Map([...byTask].map(([task, groups]) => [task, reliability(groups)]))),
    };
  }
}
