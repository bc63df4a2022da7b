// Owns keeping numbers on disk instead of in memory: a scratch file of typed
// arrays (a record's shingles, an embedding), appended one after another and
// read back by the number `append` gave. Only each entry's offset and length
// stay in memory (12 bytes), so an operation that must come back to what it
// computed for every record (dedup's kept records) does not grow with them;
// the operating system's page cache keeps the recent ones fast.

import { closeSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { doubled } from '../core/typed-arrays.js';

type Numbers = Uint32Array | Float64Array;

export class SpillFile<T extends Numbers> {
  private fd: number | undefined;
  private offsets = new Float64Array(1024);
  private lengths = new Int32Array(1024);
  private count = 0;
  private end = 0;

  constructor(readonly path: string, private readonly make: (buffer: ArrayBuffer, length: number) => T, private readonly bytesPer: number) {
    this.fd = openSync(path, 'w+');
  }

  static ofUint32(path: string): SpillFile<Uint32Array> {
    return new SpillFile(path, (buffer, length) => new Uint32Array(buffer, 0, length), 4);
  }

  static ofFloat64(path: string): SpillFile<Float64Array> {
    return new SpillFile(path, (buffer, length) => new Float64Array(buffer, 0, length), 8);
  }

  get size(): number {
    return this.count;
  }

  append(values: T): number {
    if (this.count === this.offsets.length) {
      this.offsets = doubled(this.offsets);
      this.lengths = doubled(this.lengths);
    }
    const bytes = new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
    let written = 0;
    const fd = this.open();
    while (written < bytes.byteLength) written += writeSync(fd, bytes, written, bytes.byteLength - written, this.end + written);
    this.offsets[this.count] = this.end;
    this.lengths[this.count] = values.length;
    this.end += bytes.byteLength;
    return this.count++;
  }

  read(index: number): T {
    if (!(index >= 0 && index < this.count)) throw new RangeError(`${this.path} has no entry ${index}`);
    const length = this.lengths[index]!;
    const buffer = new ArrayBuffer(length * this.bytesPer);
    const bytes = new Uint8Array(buffer);
    let read = 0;
    while (read < bytes.byteLength) {
      const got = readSync(this.open(), bytes, read, bytes.byteLength - read, this.offsets[index]! + read);
      if (got === 0) throw new Error(`${this.path} is shorter than what was written to it`);
      read += got;
    }
    return this.make(buffer, length);
  }

  private open(): number {
    if (this.fd === undefined) throw new Error(`${this.path} was removed`);
    return this.fd;
  }

  /** Closes and deletes the file; again, it does nothing. */
  remove(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    rmSync(this.path, { force: true });
  }
}
