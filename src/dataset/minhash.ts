// Owns near-duplicate detection by MinHash: a record's normalised trajectory
// as word shingles, fixed-size MinHash signatures, LSH banding tuned to a
// Jaccard threshold, and the Jaccard measures that confirm a candidate.
//
// What is shingled is what the episode *does*: every turn's role, the system
// text, the assistant's text, each call of a turn (in order) as its tool name
// followed by the words of its canonical arguments, and each tool answer as
// its outcome (`ok` or the error kind). The content of tool results is left
// out on purpose: it is world data drawn from the seed (issue titles, numbers,
// logins) that would make every two seeds look unrelated even when the agent
// asked, called and answered the same way. The user's words (the opening
// request and a simulated user's replies) are left out for the same reason: a
// lane's phrasing grammar words each request its own way, and two episodes
// must not pass for different because the user greeted or said it in another
// order; what the user asked for shows in what the agent did with it (its
// calls, their arguments, its answer). A user turn counts as a turn. Exact
// dedup still compares results and the user's words.

import { substream } from '../core/random.js';
import { doubled } from '../core/typed-arrays.js';
import type { EpisodeRecord } from '../records/episode-record.js';
import { type Turn, trajectory, turnCalls } from './trajectory.js';

export const MINHASH_PERMUTATIONS = 128;
export const SHINGLE_SIZE = 3;
/** A pair whose Jaccard similarity is exactly the threshold must become a candidate at least this often. */
export const RECALL_AT_THRESHOLD = 0.99;

const WORD = /[\p{L}\p{N}]+/gu;

function words(text: string): string[] {
  return text.normalize('NFKC').toLowerCase().match(WORD) ?? [];
}

function turnTokens(turn: Turn): string[] {
  switch (turn.role) {
    case 'system':
      return ['<system>', ...words(turn.text)];
    case 'user':
      return ['<user>'];
    case 'assistant':
      return [
        '<assistant>',
        ...words(turn.text),
        // The tool name stays one token so that `search_issues` never shares a shingle with the words "search issues".
        ...turnCalls(turn).flatMap((call) => [`<call:${call.tool}>`, ...words(call.arguments)]),
        ...(turn.malformed !== undefined ? ['<malformed>', ...words(turn.malformed)] : []),
      ];
    case 'tool':
      return ['<tool>', turn.ok ? '<ok>' : `<error:${turn.kind ?? 'unknown'}>`];
  }
}

/** The token stream near dedup compares; see the header for what is in it and why. */
export function recordTokens(record: EpisodeRecord): string[] {
  return trajectory(record).flatMap(turnTokens);
}

/** The murmur3 finalizer: a bijection on 32-bit integers with full avalanche. */
function mix32(value: number): number {
  let hash = value >>> 0;
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash >>> 0;
}

/** FNV-1a over UTF-16 code units, finalised by mix32: cheap, stable across platforms. */
function hashString(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return mix32(hash);
}

/**
 * The set of word n-grams of a token stream, each as a 32-bit hash, sorted and
 * without repeats. Hashing keeps a set compact; with a few hundred shingles a
 * record, a collision between two different shingles is vanishingly rare, so
 * Jaccard over the hashes is the Jaccard of the shingles. A stream shorter than
 * `size` is one shingle, so a tiny record still has something to compare.
 */
export function shingleSet(tokens: readonly string[], size = SHINGLE_SIZE): Uint32Array {
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`shingle size must be a positive integer, got ${size}`);
  const hashes = new Set<number>();
  if (tokens.length > 0 && tokens.length < size) hashes.add(hashString(tokens.join('\u0001')));
  for (let start = 0; start + size <= tokens.length; start++) hashes.add(hashString(tokens.slice(start, start + size).join('\u0001')));
  return Uint32Array.from(hashes).sort();
}

export function recordShingles(record: EpisodeRecord, size = SHINGLE_SIZE): Uint32Array {
  return shingleSet(recordTokens(record), size);
}

/** Exact Jaccard similarity of two sorted, repeat-free sets (as from shingleSet). Two empty sets are identical. */
export function exactJaccard(left: Uint32Array, right: Uint32Array): number {
  if (left.length === 0 && right.length === 0) return 1;
  let shared = 0;
  let leftIndex = 0;
  let rightIndex = 0;
  while (leftIndex < left.length && rightIndex < right.length) {
    const a = left[leftIndex]!;
    const b = right[rightIndex]!;
    if (a === b) {
      shared++;
      leftIndex++;
      rightIndex++;
    } else if (a < b) leftIndex++;
    else rightIndex++;
  }
  return shared / (left.length + right.length - shared);
}

/**
 * Computes MinHash signatures. Permutation i is x ↦ mix32(a_i·x + b_i mod 2^32)
 * with a_i odd, a bijection of the 32-bit space. The constants come from a
 * fixed substream so every run and every machine draws the same permutations,
 * which is what makes signatures (and so the output) reproducible.
 */
export class MinHasher {
  private readonly multipliers: Uint32Array;
  private readonly offsets: Uint32Array;

  constructor(readonly permutations = MINHASH_PERMUTATIONS) {
    if (!Number.isInteger(permutations) || permutations < 1) throw new RangeError(`permutations must be a positive integer, got ${permutations}`);
    const random = substream('episode-factory.minhash.v1', 'permutations');
    this.multipliers = new Uint32Array(permutations);
    this.offsets = new Uint32Array(permutations);
    for (let index = 0; index < permutations; index++) {
      this.multipliers[index] = (random.int(0, 0xffffffff) | 1) >>> 0;
      this.offsets[index] = random.int(0, 0xffffffff) >>> 0;
    }
  }

  /** The signature of a set of 32-bit values; an empty set signs as all 0xffffffff. */
  signature(set: Uint32Array): Uint32Array {
    const signature = new Uint32Array(this.permutations).fill(0xffffffff);
    for (const value of set) {
      for (let index = 0; index < this.permutations; index++) {
        const permuted = mix32((Math.imul(value, this.multipliers[index]!) + this.offsets[index]!) >>> 0);
        if (permuted < signature[index]!) signature[index] = permuted;
      }
    }
    return signature;
  }
}

/** The fraction of permutations on which two signatures agree: an unbiased estimate of Jaccard similarity. */
export function estimatedJaccard(left: Uint32Array, right: Uint32Array): number {
  if (left.length !== right.length || left.length === 0) throw new RangeError(`signatures differ in length (${left.length} vs ${right.length})`);
  let equal = 0;
  for (let index = 0; index < left.length; index++) if (left[index] === right[index]) equal++;
  return equal / left.length;
}

export interface Banding {
  bands: number;
  rows: number;
  /** The chance that a pair with exactly the threshold's similarity shares a bucket. */
  recall_at_threshold: number;
}

/** The chance that a pair of similarity s shares at least one of b buckets of r rows: 1 − (1 − s^r)^b. */
export function candidateProbability(similarity: number, bands: number, rows: number): number {
  return 1 - (1 - similarity ** rows) ** bands;
}

/**
 * Chooses bands × rows for a threshold. Candidates are always confirmed with
 * the exact Jaccard, so a false candidate costs one comparison while a missed
 * one is a duplicate kept: the choice is the largest r (fewest false
 * candidates) whose b = ⌊permutations / r⌋ bands still make a pair at exactly
 * the threshold a candidate with probability ≥ RECALL_AT_THRESHOLD; pairs above
 * the threshold are caught more often still. For 128 permutations and 0.9 this
 * is 12 bands of 10 rows (0.994 at 0.9, 0.07 at 0.6); for 0.5, 42 bands of 3.
 */
export function bandingFor(threshold: number, permutations = MINHASH_PERMUTATIONS): Banding {
  if (!(threshold > 0 && threshold <= 1)) throw new RangeError(`a Jaccard threshold must be in (0, 1], got ${threshold}`);
  for (let rows = permutations; rows >= 1; rows--) {
    const bands = Math.floor(permutations / rows);
    const recall = candidateProbability(threshold, bands, rows);
    if (recall >= RECALL_AT_THRESHOLD) return { bands, rows, recall_at_threshold: recall };
  }
  return { bands: permutations, rows: 1, recall_at_threshold: candidateProbability(threshold, permutations, 1) };
}

/**
 * LSH buckets: each band of a signature keys a bucket; items that share any
 * bucket are candidates. Items are small integers (positions in the dataset)
 * and candidates come back in ascending order, so iteration order never
 * depends on hashing.
 *
 * Kept in typed arrays, about 24 bytes per item and band, not strings: a
 * bucket is a 32-bit hash of its band number and rows in an open-addressing
 * table, whose slot heads a chain of the items in it. Two buckets may share a
 * hash; that only adds a candidate, which the caller confirms (dedup computes
 * the exact Jaccard), and never loses one.
 */
export class LshIndex {
  private keys = new Int32Array(1024);
  private heads = new Int32Array(1024).fill(-1);
  private used = 0;
  private items = new Int32Array(1024);
  private next = new Int32Array(1024);
  private entries = 0;

  constructor(readonly banding: Pick<Banding, 'bands' | 'rows'>) {}

  private bucketKeys(signature: Uint32Array): Int32Array {
    const { bands, rows } = this.banding;
    if (signature.length < bands * rows) throw new RangeError(`a signature of ${signature.length} values cannot fill ${bands} bands of ${rows} rows`);
    const keys = new Int32Array(bands);
    for (let band = 0; band < bands; band++) {
      let hash = Math.imul(band + 1, 0x9e3779b1);
      for (let row = band * rows; row < (band + 1) * rows; row++) {
        hash = Math.imul(hash ^ signature[row]!, 0x85ebca6b);
        hash ^= hash >>> 15;
      }
      keys[band] = mix32(hash >>> 0) | 0;
    }
    return keys;
  }

  /** The table slot of a key: where it is, or the empty slot where it would go. */
  private slotOf(key: number): number {
    const mask = this.heads.length - 1;
    let slot = mix32(key >>> 0) & mask;
    while (this.heads[slot] !== -1 && this.keys[slot] !== key) slot = (slot + 1) & mask;
    return slot;
  }

  private grow(): void {
    const [keys, heads] = [this.keys, this.heads];
    this.keys = new Int32Array(keys.length * 2);
    this.heads = new Int32Array(heads.length * 2).fill(-1);
    for (let slot = 0; slot < heads.length; slot++) {
      if (heads[slot] === -1) continue;
      const moved = this.slotOf(keys[slot]!);
      this.keys[moved] = keys[slot]!;
      this.heads[moved] = heads[slot]!;
    }
  }

  add(item: number, signature: Uint32Array): void {
    for (const key of this.bucketKeys(signature)) {
      if (this.entries === this.items.length) {
        this.items = doubled(this.items);
        this.next = doubled(this.next);
      }
      if ((this.used + 1) * 2 > this.heads.length) this.grow();
      const slot = this.slotOf(key);
      if (this.heads[slot] === -1) {
        this.keys[slot] = key;
        this.used++;
      }
      this.items[this.entries] = item;
      this.next[this.entries] = this.heads[slot]!;
      this.heads[slot] = this.entries++;
    }
  }

  /**
   * The items that share a bucket with `signature`, ascending. With `perBucket`,
   * only the most recently added that many of each bucket: a bucket that
   * thousands of similar items share would otherwise make every search
   * compare with all of them, and a dedup of a dataset of similar episodes
   * quadratic in its size.
   */
  candidates(signature: Uint32Array, perBucket = Number.POSITIVE_INFINITY): number[] {
    const found = new Set<number>();
    for (const key of this.bucketKeys(signature)) {
      let taken = 0;
      for (let entry = this.heads[this.slotOf(key)]!; entry !== -1 && taken < perBucket; entry = this.next[entry]!, taken++) found.add(this.items[entry]!);
    }
    return [...found].sort((left, right) => left - right);
  }
}

/** Every pair (i < j) of signatures that shares a bucket, in ascending order. */
export function candidatePairs(signatures: readonly Uint32Array[], banding: Pick<Banding, 'bands' | 'rows'>): [number, number][] {
  const index = new LshIndex(banding);
  const pairs: [number, number][] = [];
  signatures.forEach((signature, item) => {
    for (const earlier of index.candidates(signature)) pairs.push([earlier, item]);
    index.add(item, signature);
  });
  return pairs.sort((left, right) => left[0] - right[0] || left[1] - right[1]);
}
