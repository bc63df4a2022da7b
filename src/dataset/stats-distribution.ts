// Owns a distribution of whole numbers as the statistics report it: count,
// nearest-rank percentiles (each a value that occurs), mean, and a histogram
// of at most MAX_HISTOGRAM_BINS bins. A pass over a dataset tallies how often
// each value occurs (`WholeNumbers`): a few distinct values, whatever the
// number of records, where a list of every value grew by 8 bytes a record.

/** At most this many histogram bins, so the text table stays a glance. */
const MAX_HISTOGRAM_BINS = 10;

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

/** Nearest-rank percentile of sorted values: the smallest value with at least q of the sample at or below it. */
function nearestRank(sorted: readonly number[], q: number): number {
  const rank = Math.max(1, Math.ceil(q * sorted.length));
  return sorted[rank - 1]!;
}

/** How often each whole number occurs: what a distribution needs, in memory that grows with the distinct values only. */
export class WholeNumbers {
  private readonly counts = new Map<number, number>();

  add(value: number): void {
    this.counts.set(value, (this.counts.get(value) ?? 0) + 1);
  }

  /** The same figures as `distribution` of every value added. */
  distribution(): Distribution {
    const values = [...this.counts.keys()].sort((left, right) => left - right);
    const count = values.reduce((total, value) => total + this.counts.get(value)!, 0);
    if (count === 0) return distribution([]);
    const min = values[0]!;
    const max = values[values.length - 1]!;
    const width = Math.max(1, Math.ceil((max - min + 1) / MAX_HISTOGRAM_BINS));
    const histogram: HistogramBin[] = [];
    for (let from = min; from <= max; from += width) histogram.push({ from, to: from + width - 1, count: 0 });
    let sum = 0;
    for (const value of values) {
      const times = this.counts.get(value)!;
      histogram[Math.floor((value - min) / width)]!.count += times;
      sum += value * times;
    }
    /** The smallest value with at least rank values at or below it. */
    const atRank = (q: number): number => {
      const rank = Math.max(1, Math.ceil(q * count));
      let below = 0;
      for (const value of values) {
        below += this.counts.get(value)!;
        if (below >= rank) return value;
      }
      return max;
    };
    return { count, min, p50: atRank(0.5), p90: atRank(0.9), max, mean: sum / count, histogram };
  }
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
