// Owns what the fault layer remembers for one episode (or one proxy session),
// across reconnects: which plan entries are live, how often each has fired,
// the call and listing counters, renamed tools, cached reads for stale reads,
// and unfinished transient failures. Every choice is drawn from the episode's
// `faults` substream in message order, so a replay re-fires the same faults at
// the same places.

import { canonicalJson } from '../../core/canonical-json.js';
import type { JsonObject } from '../../core/json-value.js';
import type { Random } from '../../core/random.js';
import { LIST_FAULTS, type FaultEntry, type FaultKind, type FaultPlan, type FiredFault } from './fault-plan.js';

export interface FaultPlace {
  tool: string | null;
  call: number | null;
  list: number | null;
}

export interface CachedRead {
  /** The upstream result, exactly as it was answered. */
  result: JsonObject;
  /** How many writes had happened when it was read. */
  epoch: number;
}

export class FaultState {
  readonly random: Random;
  /** The entries that may fire in this episode. */
  readonly live: readonly FaultEntry[];
  readonly fired: FiredFault[] = [];
  calls = 0;
  lists = 0;
  /** Completed writes (calls of tools that are not reads) seen so far. */
  writes = 0;
  /** original name → new name, or null when the tool was removed. */
  readonly renamed = new Map<string, string | null>();
  readonly reads = new Map<string, CachedRead>();
  /** call key → failures still to come. */
  readonly transient = new Map<string, { entry: FaultEntry; remaining: number; total: number }>();
  private readonly fires = new Map<string, number>();

  constructor(
    readonly plan: FaultPlan,
    random: Random,
    private readonly onFired: (fault: FiredFault) => void = () => {},
  ) {
    this.random = random;
    const entries = plan.faults;
    if (plan.select === 'one' && entries.length > 0) {
      const weights: Record<string, number> = {};
      for (const entry of entries) weights[entry.id] = entry.weight ?? 1;
      const chosen = random.weighted(weights);
      this.live = entries.filter((entry) => entry.id === chosen);
    } else {
      this.live = entries;
    }
  }

  /**
   * The first live entry of one of `kinds` that may fire at `place` and passes
   * its probability draw. `eligible` adds a kind's own condition (a stale read
   * needs an earlier read). Draws happen only for entries that could fire.
   */
  choose(kinds: readonly FaultKind[], place: FaultPlace, eligible: (entry: FaultEntry) => boolean = () => true): FaultEntry | undefined {
    for (const entry of this.live) {
      if (!kinds.includes(entry.kind)) continue;
      if ((this.fires.get(entry.id) ?? 0) >= (entry.max_fires ?? 1)) continue;
      if (LIST_FAULTS.has(entry.kind)) {
        if (place.list === null || (entry.lists && !entry.lists.includes(place.list))) continue;
      } else {
        if (place.call === null || (entry.calls && !entry.calls.includes(place.call))) continue;
        if (entry.tools && (place.tool === null || !entry.tools.includes(place.tool))) continue;
      }
      if (!eligible(entry)) continue;
      const probability = entry.probability ?? 1;
      if (probability < 1 && !this.random.chance(probability)) continue;
      this.fires.set(entry.id, (this.fires.get(entry.id) ?? 0) + 1);
      return entry;
    }
    return undefined;
  }

  record(entry: FaultEntry, place: FaultPlace, detail: string, extra: Pick<FiredFault, 'renamed_to'> = {}): void {
    const fault: FiredFault = { kind: entry.kind, fault: entry.id, tool: place.tool, call: place.call ?? place.list, detail, ...extra };
    this.fired.push(fault);
    this.onFired(fault);
  }
}

/** Identifies "the same call" for transient failures and cached reads. */
export function callKey(tool: string, args: unknown): string {
  return `${tool}\u0000${canonicalJson(args ?? {})}`;
}
