// Owns building the record's Arrow columns from rows: one typed builder per
// column of RECORD_ARROW_SCHEMA (Utf8, Int32, Int64, Bool, List, Struct),
// appending straight into growable offset, value and bitmap buffers, instead
// of apache-arrow's row-wise vectorFromArray (about 20× slower here).
//
// The buffers are laid out as apache-arrow's own builders lay them out, so a
// batch written to an Arrow IPC stream is byte-identical to the one
// vectorFromArray built: bitmaps (validity and Bool values) are rounded up to
// 64 bytes, a validity bitmap is present only when a column has a null, a
// null struct marks every child null too, and a null list or string repeats
// its offset. tests/records/arrow-builders.test.ts holds both to the same bytes.

import { Bool, type DataType, Int, List, makeData, RecordBatch, Struct, Type, Utf8, type Data } from 'apache-arrow';
import { RECORD_ARROW_SCHEMA, RECORD_STRUCT, type recordToRow } from './arrow-schema.js';

/** apache-arrow's BufferBuilder rounding: a flushed buffer is a whole number of 64-byte blocks, at least one. */
export function bitmapBytes(length: number): number {
  const bytesMinus1 = Math.ceil(length / 8) - 1;
  return bytesMinus1 - (bytesMinus1 % 64) + 64 || 64;
}

function grow<T extends Uint8Array | Int32Array | BigInt64Array>(array: T, needed: number): T {
  if (needed <= array.length) return array;
  const next = new (array.constructor as new (length: number) => T)(Math.max(needed, array.length * 2, 64));
  next.set(array as never);
  return next;
}

abstract class ColumnBuilder {
  length = 0;
  nullCount = 0;
  protected validity = new Uint8Array(0);

  constructor(readonly type: DataType) {}

  append(value: unknown): void {
    if (value === null || value === undefined) this.appendNull();
    else {
      this.markValid(this.length);
      this.appendValue(value);
      this.length++;
    }
  }

  /** A null here; a struct also marks its children null, as apache-arrow's StructBuilder does. */
  appendNull(): void {
    this.nullCount++;
    this.validity = grow(this.validity, (this.length >> 3) + 1);
    this.appendEmpty();
    this.length++;
  }

  protected markValid(index: number): void {
    this.validity = grow(this.validity, (index >> 3) + 1);
    this.validity[index >> 3]! |= 1 << (index & 7);
  }

  protected abstract appendValue(value: unknown): void;
  /** What a null leaves in the value buffers (a repeated offset, a zero, a null in each child). */
  protected abstract appendEmpty(): void;
  protected abstract finishData(length: number, nullCount: number, nullBitmap: Uint8Array | undefined): Data;

  /** The column built so far as Data; the builder starts again empty. */
  finish(): Data {
    const { length, nullCount } = this;
    let nullBitmap: Uint8Array | undefined;
    if (nullCount > 0) {
      nullBitmap = new Uint8Array(bitmapBytes(length));
      nullBitmap.set(this.validity.subarray(0, Math.min(this.validity.length, nullBitmap.length, (length + 7) >> 3)));
    }
    this.length = 0;
    this.nullCount = 0;
    this.validity.fill(0);
    return this.finishData(length, nullCount, nullBitmap);
  }
}

const encoder = new TextEncoder();
/** Strings at least this long are kept encoded: a lane's tool descriptions and schemas repeat in every record. */
const CACHED_CHARS = 64;
const CACHE_ENTRIES = 512;

class Utf8Builder extends ColumnBuilder {
  private offsets = new Int32Array(1024);
  private bytes = new Uint8Array(1 << 16);
  private end = 0;
  private readonly encoded = new Map<string, Uint8Array>();
  private caching = true;
  private hits = 0;
  private misses = 0;

  protected appendValue(value: unknown): void {
    const text = value as string;
    const cached = text.length >= CACHED_CHARS && this.caching ? this.cachedBytes(text) : undefined;
    if (cached) {
      this.bytes = grow(this.bytes, this.end + cached.length);
      this.bytes.set(cached, this.end);
      this.end += cached.length;
    } else {
      // At most three bytes per UTF-16 code unit; ASCII (nearly every short string) is copied here, the rest encoded.
      this.bytes = grow(this.bytes, this.end + text.length * 3);
      const bytes = this.bytes;
      let end = this.end;
      let index = 0;
      if (text.length < CACHED_CHARS) {
        for (; index < text.length; index++) {
          const code = text.charCodeAt(index);
          if (code >= 0x80) break;
          bytes[end++] = code;
        }
      }
      if (index < text.length) end += encoder.encodeInto(index === 0 ? text : text.slice(index), bytes.subarray(end)).written;
      this.end = end;
    }
    this.pushOffset();
  }

  /**
   * The bytes of a long string this column has seen before. A column whose
   * long strings rarely repeat (message contents) stops looking them up.
   */
  private cachedBytes(text: string): Uint8Array | undefined {
    const bytes = this.encoded.get(text);
    if (bytes) {
      this.hits++;
      return bytes;
    }
    this.misses++;
    if (this.misses > CACHE_ENTRIES && this.hits < this.misses) {
      this.caching = false;
      this.encoded.clear();
      return undefined;
    }
    if (this.encoded.size >= CACHE_ENTRIES) this.encoded.clear();
    const encoded = encoder.encode(text);
    this.encoded.set(text, encoded);
    return encoded;
  }

  protected appendEmpty(): void {
    this.pushOffset();
  }

  private pushOffset(): void {
    this.offsets = grow(this.offsets, this.length + 2);
    this.offsets[this.length + 1] = this.end;
  }

  protected finishData(length: number, nullCount: number, nullBitmap: Uint8Array | undefined): Data {
    const valueOffsets = this.offsets.slice(0, length + 1);
    const data = this.bytes.slice(0, this.end);
    // The buffers are kept for the next batch: offsets[0] stays 0, the rest is overwritten.
    this.end = 0;
    return makeData({ type: this.type as Utf8, length, nullCount, nullBitmap, valueOffsets, data });
  }
}

class Int32Builder extends ColumnBuilder {
  private values = new Int32Array(64);

  protected appendValue(value: unknown): void {
    this.values = grow(this.values, this.length + 1);
    this.values[this.length] = value as number;
  }

  protected appendEmpty(): void {
    this.values = grow(this.values, this.length + 1);
    this.values[this.length] = 0;
  }

  protected finishData(length: number, nullCount: number, nullBitmap: Uint8Array | undefined): Data {
    const data = this.values.slice(0, length);
    return makeData({ type: this.type as Int, length, nullCount, nullBitmap, data });
  }
}

class Int64Builder extends ColumnBuilder {
  private values = new BigInt64Array(64);

  protected appendValue(value: unknown): void {
    this.values = grow(this.values, this.length + 1);
    this.values[this.length] = typeof value === 'bigint' ? value : BigInt(value as number);
  }

  protected appendEmpty(): void {
    this.values = grow(this.values, this.length + 1);
    this.values[this.length] = 0n;
  }

  protected finishData(length: number, nullCount: number, nullBitmap: Uint8Array | undefined): Data {
    const data = this.values.slice(0, length);
    return makeData({ type: this.type as Int, length, nullCount, nullBitmap, data } as never);
  }
}

class BoolBuilder extends ColumnBuilder {
  private bits = new Uint8Array(64);

  protected appendValue(value: unknown): void {
    this.bits = grow(this.bits, (this.length >> 3) + 1);
    if (value) this.bits[this.length >> 3]! |= 1 << (this.length & 7);
  }

  protected appendEmpty(): void {
    this.bits = grow(this.bits, (this.length >> 3) + 1);
  }

  protected finishData(length: number, nullCount: number, nullBitmap: Uint8Array | undefined): Data {
    const data = new Uint8Array(bitmapBytes(length));
    data.set(this.bits.subarray(0, Math.min(this.bits.length, data.length, (length + 7) >> 3)));
    this.bits.fill(0);
    return makeData({ type: this.type as Bool, length, nullCount, nullBitmap, data });
  }
}

class ListBuilder extends ColumnBuilder {
  private offsets = new Int32Array(64);
  private readonly item: ColumnBuilder;

  constructor(type: List) {
    super(type);
    this.item = builderFor(type.children[0]!.type);
  }

  protected appendValue(value: unknown): void {
    for (const item of value as readonly unknown[]) this.item.append(item);
    this.pushOffset();
  }

  protected appendEmpty(): void {
    this.pushOffset();
  }

  private pushOffset(): void {
    this.offsets = grow(this.offsets, this.length + 2);
    this.offsets[this.length + 1] = this.item.length;
  }

  protected finishData(length: number, nullCount: number, nullBitmap: Uint8Array | undefined): Data {
    const valueOffsets = this.offsets.slice(0, length + 1);
    return makeData({ type: this.type as List, length, nullCount, nullBitmap, valueOffsets, child: this.item.finish() });
  }
}

class StructBuilder extends ColumnBuilder {
  private readonly names: string[];
  private readonly children: ColumnBuilder[];

  constructor(type: Struct) {
    super(type);
    this.names = type.children.map((field) => field.name);
    this.children = type.children.map((field) => builderFor(field.type));
  }

  protected appendValue(value: unknown): void {
    const row = value as Record<string, unknown>;
    for (let index = 0; index < this.children.length; index++) this.children[index]!.append(row[this.names[index]!]);
  }

  protected appendEmpty(): void {
    for (const child of this.children) child.appendNull();
  }

  protected finishData(length: number, nullCount: number, nullBitmap: Uint8Array | undefined): Data {
    return makeData({ type: this.type as Struct, length, nullCount, nullBitmap, children: this.children.map((child) => child.finish()) });
  }
}

function builderFor(type: DataType): ColumnBuilder {
  switch (type.typeId) {
    case Type.Utf8:
      return new Utf8Builder(type);
    case Type.Bool:
      return new BoolBuilder(type);
    case Type.Int:
      return (type as Int).bitWidth === 64 ? new Int64Builder(type) : new Int32Builder(type);
    case Type.List:
      return new ListBuilder(type as List);
    case Type.Struct:
      return new StructBuilder(type as Struct);
    default:
      throw new Error(`no column builder for ${String(type)}`);
  }
}

/** Rows of RECORD_ARROW_SCHEMA (recordToRow's shape) appended one by one, taken as record batches. */
export class RecordBatchBuilder {
  private readonly root = new StructBuilder(RECORD_STRUCT);

  get numRows(): number {
    return this.root.length;
  }

  append(row: ReturnType<typeof recordToRow>): void {
    this.root.append(row);
  }

  /** The rows appended since the last batch (possibly none) as one record batch. */
  finishBatch(): RecordBatch {
    return new RecordBatch(RECORD_ARROW_SCHEMA, this.root.finish() as Data<Struct>);
  }
}
