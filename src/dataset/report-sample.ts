// Owns which episodes the report's viewer embeds when there are more than it
// holds: records grouped by stratum (world, then task, then policy, outcome
// and fault kinds), the groups taking turns, so a sample covers every group
// before any group gives a second.

import { Int32List } from '../core/typed-arrays.js';
import type { EpisodeRecord } from '../records/episode-record.js';
import { compareKeys } from './key-order.js';
import { faultKinds, policyKey, worldKey } from './report-record-keys.js';

/** What the viewer's sample is spread over, outermost first. */
export function stratumOf(record: EpisodeRecord): string[] {
  return [worldKey(record), record.task.id, policyKey(record), String(record.result.task_completed), faultKinds(record).join(',')];
}

/** Records grouped by stratum, level by level: world, then task, then policy, outcome and fault kinds. */
export class StrataTree {
  private readonly children = new Map<string, StrataTree>();
  private readonly lines = new Int32List();

  add(path: readonly string[], line: number): void {
    if (path.length === 0) {
      this.lines.push(line);
      return;
    }
    const [head, ...rest] = path as [string, ...string[]];
    let child = this.children.get(head);
    if (child === undefined) {
      child = new StrataTree();
      this.children.set(head, child);
    }
    child.add(rest, line);
  }

  /**
   * The first `limit` lines in the order a sample takes them: at each level
   * the groups take turns (in key order), so the first lines cover every
   * world, then every task of each world, and so on, before any group gives a
   * second. No group gives more than `limit`, so only those are ever listed.
   */
  first(limit: number): number[] {
    if (this.children.size === 0) return this.lines.first(limit);
    const groups = [...this.children.keys()].sort(compareKeys).map((key) => this.children.get(key)!.first(limit));
    const out: number[] = [];
    const longest = Math.max(...groups.map((group) => group.length));
    for (let round = 0; round < longest && out.length < limit; round++) {
      for (const group of groups) if (round < group.length && out.length < limit) out.push(group[round]!);
    }
    return out;
  }
}

/** The lines to embed: all when they fit, else the first `budget` of the tree's order. */
export function chooseSample(strata: StrataTree, budget: number): Set<number> {
  return new Set(strata.first(budget));
}
