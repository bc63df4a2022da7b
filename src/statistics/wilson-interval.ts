// Owns the Wilson score interval for a binomial proportion (95%, z = 1.96).
// Wilson rather than the normal approximation because dataset slices are
// small and rates sit at 0 or 1 often: the Wald interval collapses to a point
// there, Wilson stays honest and inside [0, 1].

const Z_95 = 1.96;

/** A proportion with its sample size and 95% Wilson interval. */
export interface Rate {
  successes: number;
  n: number;
  /** successes / n; null when n = 0, where no rate was observed. */
  rate: number | null;
  low: number;
  high: number;
}

export function wilsonInterval(successes: number, n: number, z: number = Z_95): Rate {
  if (!Number.isInteger(successes) || !Number.isInteger(n) || n < 0 || successes < 0 || successes > n) {
    throw new RangeError(`wilsonInterval(${successes}, ${n}): need integers with 0 <= successes <= n`);
  }
  // No observations say nothing: the whole unit interval, not a made-up rate.
  if (n === 0) return { successes, n, rate: null, low: 0, high: 1 };
  const p = successes / n;
  const z2 = z * z;
  const denominator = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denominator;
  const half = (z / denominator) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  // At 0/n and n/n the bound is exactly 0 or 1 in theory; floating point can
  // land a hair outside or inside, so pin the edges.
  const low = successes === 0 ? 0 : Math.max(0, centre - half);
  const high = successes === n ? 1 : Math.min(1, centre + half);
  return { successes, n, rate: p, low, high };
}

/** `0.688 [0.580, 0.778] n=80`; an empty sample reads `- [0.000, 1.000] n=0`. */
export function formatRate(rate: Rate, digits = 3): string {
  const value = rate.rate === null ? '-' : rate.rate.toFixed(digits);
  return `${value} [${rate.low.toFixed(digits)}, ${rate.high.toFixed(digits)}] n=${rate.n}`;
}
