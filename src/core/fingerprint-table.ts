// Owns counting distinct values of one pass over many records in a few bytes
// each: a value is known by a 64-bit fingerprint (the first 16 hex digits of
// its sha256) in an open-addressing table of typed arrays, with a 32-bit
// number beside it (the first record that had it). A Map of 64-character
// hash strings spent about 150 bytes a record; this spends 24 at most.

import { sha256Hex } from './hashing.js';
import { doubled } from './typed-arrays.js';

/** 64-bit fingerprints, each with a 32-bit value. */
export class FingerprintTable {
  private high = new Uint32Array(1024);
  private low = new Uint32Array(1024);
  private values = new Int32Array(1024);
  /** 1 where a slot holds a fingerprint. */
  private used = new Uint8Array(1024);
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** The value of `hex`'s fingerprint, or undefined when it has none. */
  get(hex: string): number | undefined {
    const slot = this.slotOf(Number.parseInt(hex.slice(0, 8), 16) >>> 0, Number.parseInt(hex.slice(8, 16), 16) >>> 0);
    return this.used[slot] === 1 ? this.values[slot]! : undefined;
  }

  /** The value of `hex`'s fingerprint (a sha256 in hex, or any hex of 16 digits or more); when it is new, it is added with `value` and undefined comes back. */
  getOrAdd(hex: string, value: number): number | undefined {
    const high = Number.parseInt(hex.slice(0, 8), 16) >>> 0;
    const low = Number.parseInt(hex.slice(8, 16), 16) >>> 0;
    let slot = this.slotOf(high, low);
    if (this.used[slot] === 1) return this.values[slot]!;
    if ((this.count + 1) * 2 > this.used.length) {
      this.grow();
      slot = this.slotOf(high, low);
    }
    this.used[slot] = 1;
    this.high[slot] = high;
    this.low[slot] = low;
    this.values[slot] = value;
    this.count++;
    return undefined;
  }

  /** The slot that holds the fingerprint, or the empty one where it would go. */
  private slotOf(high: number, low: number): number {
    const mask = this.used.length - 1;
    let slot = (low ^ Math.imul(high, 0x9e3779b1)) & mask;
    while (this.used[slot] === 1 && (this.high[slot] !== high || this.low[slot] !== low)) slot = (slot + 1) & mask;
    return slot;
  }

  private grow(): void {
    const [high, low, values, used] = [this.high, this.low, this.values, this.used];
    this.high = new Uint32Array(high.length * 2);
    this.low = new Uint32Array(low.length * 2);
    this.values = new Int32Array(values.length * 2);
    this.used = new Uint8Array(used.length * 2);
    for (let slot = 0; slot < used.length; slot++) {
      if (used[slot] !== 1) continue;
      const moved = this.slotOf(high[slot]!, low[slot]!);
      this.used[moved] = 1;
      this.high[moved] = high[slot]!;
      this.low[moved] = low[slot]!;
      this.values[moved] = values[slot]!;
    }
  }
}

/** Distinct texts, counted by fingerprint. */
export class DistinctCount {
  private readonly table = new FingerprintTable();

  add(text: string): void {
    this.table.getOrAdd(sha256Hex(text), 0);
  }

  get size(): number {
    return this.table.size;
  }
}

/** Strings kept as UTF-8 in one growing buffer, each found again by its number: about its own bytes and 4 more. */
export class StringArena {
  private bytes = new Uint8Array(1 << 16);
  private ends = new Int32Array(1024);
  private count = 0;
  private used = 0;
  private readonly encoder = new TextEncoder();
  private readonly decoder = new TextDecoder();

  /** Keeps `text`; returns its number. */
  add(text: string): number {
    const encoded = this.encoder.encode(text);
    while (this.used + encoded.length > this.bytes.length) this.bytes = doubled(this.bytes);
    if (this.count === this.ends.length) this.ends = doubled(this.ends);
    this.bytes.set(encoded, this.used);
    this.used += encoded.length;
    this.ends[this.count] = this.used;
    return this.count++;
  }

  get(index: number): string {
    const start = index === 0 ? 0 : this.ends[index - 1]!;
    return this.decoder.decode(this.bytes.subarray(start, this.ends[index]!));
  }
}
