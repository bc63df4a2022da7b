// Owns counting records by key for the statistics: successes out of n per
// key, turned into Wilson rates, and each distinct key counted once per
// record; both are read back in key order.

import { type Rate, wilsonInterval } from '../statistics/wilson-interval.js';
import { sortedRecord } from './key-order.js';

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

export class CountTally {
  private readonly counts = new Map<string, number>();

  /** Each distinct key once per record. */
  add(keys: Iterable<string>): void {
    for (const key of new Set(keys)) this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  counted(): Record<string, number> {
    return sortedRecord(this.counts);
  }
}
