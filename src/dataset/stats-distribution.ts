// Owns a distribution of whole numbers as the statistics report it: count,
// nearest-rank percentiles (each a value that occurs), mean, and a histogram
// of at most MAX_HISTOGRAM_BINS bins.

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
