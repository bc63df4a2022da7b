// Owns growing the typed arrays that stores keep one entry per record in
// (places of lines, decisions, bucket chains): a copy twice as long, so adding
// an entry costs a constant on average and the memory stays a few bytes a
// record instead of an object each.

type TypedArray = Int32Array | Uint8Array | Uint16Array | Uint32Array | Float64Array;

/** A copy of `array`, twice as long (at least 1,024 entries), with its entries at the start. */
export function doubled<T extends TypedArray>(array: T): T {
  const larger = new (array.constructor as new (length: number) => T)(Math.max(1024, array.length * 2));
  larger.set(array);
  return larger;
}

/** Whole numbers (32-bit) appended one at a time: 4 bytes each, where a JavaScript array of numbers spends 8 and more. */
export class Int32List {
  private values = new Int32Array(16);
  private count = 0;

  get length(): number {
    return this.count;
  }

  push(value: number): void {
    if (this.count === this.values.length) this.values = doubled(this.values);
    this.values[this.count++] = value;
  }

  get(index: number): number {
    return this.values[index]!;
  }

  /** The first `count` numbers (all of them when there are fewer), as an array. */
  first(count: number): number[] {
    return Array.from(this.values.subarray(0, Math.min(count, this.count)));
  }
}
