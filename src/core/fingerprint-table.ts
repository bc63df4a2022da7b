// Owns counting distinct values of one pass over many records in a few bytes
// each: a value is known by a 64-bit fingerprint (the first 16 hex digits of
// its sha256) in an open-addressing table of typed arrays, with a 32-bit
// number beside it (the first record that had it) where the caller needs one.
// A Map of 64-character hash strings spent about 150 bytes a record; a table
// spends 16 to 32 bytes with numbers, 11 to 21 without (filled to three
// quarters before it doubles).

import { sha256Hex } from './hashing.js';
import { doubled } from './typed-arrays.js';

/** Slots filled before a table doubles, of every four. */
const FILLED_QUARTERS = 3;

/** 64-bit fingerprints, each with a 32-bit value (or none, for a set). */
export class FingerprintTable {
  // An empty slot holds 0 in both halves: a fingerprint that is 0 in both is taken as 0 and 1.
  private high = new Uint32Array(1024);
  private low = new Uint32Array(1024);
  private values: Int32Array | undefined;
  private count = 0;

  /** `withValues: false` keeps no number beside each fingerprint: a set (every value reads 0). */
  constructor(options: { withValues?: boolean } = {}) {
    this.values = options.withValues === false ? undefined : new Int32Array(1024);
  }

  get size(): number {
    return this.count;
  }

  /** The value of `hex`'s fingerprint, or undefined when it has none. */
  get(hex: string): number | undefined {
    const [high, low] = halves(hex);
    const slot = this.slotOf(high, low);
    return this.isEmpty(slot) ? undefined : (this.values?.[slot] ?? 0);
  }

  /** The value of `hex`'s fingerprint (a sha256 in hex, or any hex of 16 digits or more); when it is new, it is added with `value` and undefined comes back. */
  getOrAdd(hex: string, value: number): number | undefined {
    const [high, low] = halves(hex);
    let slot = this.slotOf(high, low);
    if (!this.isEmpty(slot)) return this.values?.[slot] ?? 0;
    if ((this.count + 1) * 4 > this.high.length * FILLED_QUARTERS) {
      this.grow();
      slot = this.slotOf(high, low);
    }
    this.high[slot] = high;
    this.low[slot] = low;
    if (this.values) this.values[slot] = value;
    this.count++;
    return undefined;
  }

  private isEmpty(slot: number): boolean {
    return this.high[slot] === 0 && this.low[slot] === 0;
  }

  /** The slot that holds the fingerprint, or the empty one where it would go. */
  private slotOf(high: number, low: number): number {
    const mask = this.high.length - 1;
    let slot = (low ^ Math.imul(high, 0x9e3779b1)) & mask;
    while (!this.isEmpty(slot) && (this.high[slot] !== high || this.low[slot] !== low)) slot = (slot + 1) & mask;
    return slot;
  }

  private grow(): void {
    const [high, low, values] = [this.high, this.low, this.values];
    this.high = new Uint32Array(high.length * 2);
    this.low = new Uint32Array(low.length * 2);
    this.values = values ? new Int32Array(values.length * 2) : undefined;
    for (let slot = 0; slot < high.length; slot++) {
      if (high[slot] === 0 && low[slot] === 0) continue;
      const moved = this.slotOf(high[slot]!, low[slot]!);
      this.high[moved] = high[slot]!;
      this.low[moved] = low[slot]!;
      if (values) this.values![moved] = values[slot]!;
    }
  }
}

/** A fingerprint's two 32-bit halves, never both 0 (0 and 0 marks an empty slot). */
function halves(hex: string): [number, number] {
  const high = Number.parseInt(hex.slice(0, 8), 16) >>> 0;
  const low = Number.parseInt(hex.slice(8, 16), 16) >>> 0;
  return high === 0 && low === 0 ? [0, 1] : [high, low];
}

/** Distinct texts, counted by fingerprint. */
export class DistinctCount {
  private readonly table = new FingerprintTable({ withValues: false });

  add(text: string): void {
    this.table.getOrAdd(sha256Hex(text), 0);
  }

  /** Counts a fingerprint already made (a sha256 in hex). */
  addHash(hex: string): void {
    this.table.getOrAdd(hex, 0);
  }

  get size(): number {
    return this.table.size;
  }
}

/** Bytes of each block a StringArena keeps its strings in. */
const ARENA_BLOCK = 1 << 20;

/**
 * Strings kept as UTF-8 in blocks of a megabyte, each found again by its
 * number: about its own bytes and 4 more. Blocks, not one buffer that
 * doubles: a doubling buffer is up to half empty, and while it doubles both
 * copies are alive (at 250,000 record ids, 24 MB for 9 MB of text).
 */
export class StringArena {
  private readonly blocks: Uint8Array[] = [];
  private ends = new Int32Array(1024);
  private count = 0;
  private used = 0;
  private readonly encoder = new TextEncoder();
  private readonly decoder = new TextDecoder();

  /** Keeps `text`; returns its number. */
  add(text: string): number {
    const encoded = this.encoder.encode(text);
    // A string may run on into the next block (get joins the pieces).
    for (let offset = 0; offset < encoded.length; ) {
      const block = Math.floor(this.used / ARENA_BLOCK);
      if (block === this.blocks.length) this.blocks.push(new Uint8Array(ARENA_BLOCK));
      const within = this.used % ARENA_BLOCK;
      const taken = Math.min(ARENA_BLOCK - within, encoded.length - offset);
      this.blocks[block]!.set(encoded.subarray(offset, offset + taken), within);
      offset += taken;
      this.used += taken;
    }
    if (this.count === this.ends.length) this.ends = doubled(this.ends);
    this.ends[this.count] = this.used;
    return this.count++;
  }

  get(index: number): string {
    const start = index === 0 ? 0 : this.ends[index - 1]!;
    const end = this.ends[index]!;
    const first = Math.floor(start / ARENA_BLOCK);
    if (end === start) return '';
    if (Math.floor((end - 1) / ARENA_BLOCK) === first) return this.decoder.decode(this.blocks[first]!.subarray(start % ARENA_BLOCK, start % ARENA_BLOCK + end - start));
    const joined = new Uint8Array(end - start);
    for (let at = start; at < end; ) {
      const within = at % ARENA_BLOCK;
      const taken = Math.min(ARENA_BLOCK - within, end - at);
      joined.set(this.blocks[Math.floor(at / ARENA_BLOCK)]!.subarray(within, within + taken), at - start);
      at += taken;
    }
    return this.decoder.decode(joined);
  }
}
