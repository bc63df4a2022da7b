// Owns the contract of a text embedder, the defaults every provider shares
// (how many texts go in one request, how long a server may stay silent on
// one), and the cosine similarity that compares the vectors. Providers live
// in their own files, found by name in the registry, so that what embeds
// (dedup) never depends on one.

export interface Embedder {
  /** How the report names it, e.g. `ollama:nomic-embed-text`. */
  readonly name: string;
  /** What exactly embedded (a model digest), once known: a model name alone can be re-pulled as different weights. */
  readonly digest?: string | undefined;
  /** One vector per text, in the order given, all of the same length. */
  embed(texts: string[]): Promise<number[][]>;
}

/** Inputs per embedding request: large enough to amortise the round trip, small enough to keep one request's memory modest. */
export const DEFAULT_EMBED_BATCH = 32;

/**
 * How long a server may stay silent on one embedding request: it answers a
 * batch only when every text of it is embedded, and a CPU embeds a batch of
 * 32 long episodes in tens of seconds (more on the first request, which loads
 * the model).
 */
export const DEFAULT_EMBED_TIMEOUT_MS = 120_000;

/** Cosine of the angle between two vectors; 0 when either is all zeros (it points nowhere). */
export function cosineSimilarity(left: readonly number[], right: readonly number[]): number {
  if (left.length !== right.length) throw new RangeError(`cannot compare vectors of ${left.length} and ${right.length} dimensions`);
  let dot = 0;
  let leftNorm = 0;
  let rightNorm = 0;
  for (let index = 0; index < left.length; index++) {
    const a = left[index]!;
    const b = right[index]!;
    dot += a * b;
    leftNorm += a * a;
    rightNorm += b * b;
  }
  if (leftNorm === 0 || rightNorm === 0) return 0;
  // One square root of the product rounds less than two, and the clamp keeps rounding from reporting a similarity above 1.
  return Math.min(1, Math.max(-1, dot / Math.sqrt(leftNorm * rightNorm)));
}
