// Owns the exact McNemar test for paired binary outcomes (the same episodes
// run by two policies): only the discordant pairs count, and under "no
// difference" each goes either way with probability 1/2. Exact rather than the
// chi-square approximation, because gate batteries are small.

export interface McNemar {
  /** Pairs only the first policy completed. */
  first_only: number;
  /** Pairs only the second policy completed. */
  second_only: number;
  /** Two-sided exact p-value. */
  p_value: number;
}

function binomialTail(successes: number, trials: number): number {
  // P(X <= successes) for X ~ Binomial(trials, 1/2), summed in log space to stay exact enough for large n.
  let total = 0;
  let logChoose = 0;
  for (let k = 0; k <= successes; k++) {
    if (k > 0) logChoose += Math.log(trials - k + 1) - Math.log(k);
    total += Math.exp(logChoose - trials * Math.LN2);
  }
  return total;
}

export function mcnemarExact(firstOnly: number, secondOnly: number): McNemar {
  if (!Number.isInteger(firstOnly) || !Number.isInteger(secondOnly) || firstOnly < 0 || secondOnly < 0) {
    throw new RangeError(`discordant counts must be whole numbers, got ${firstOnly} and ${secondOnly}`);
  }
  const trials = firstOnly + secondOnly;
  const p = trials === 0 ? 1 : Math.min(1, 2 * binomialTail(Math.min(firstOnly, secondOnly), trials));
  return { first_only: firstOnly, second_only: secondOnly, p_value: p };
}
