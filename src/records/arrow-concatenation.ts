// Owns joining row ranges of Arrow columns into one contiguous column, for the
// record's column types (Utf8, Int32, Int64, Bool, List, Struct), and cutting
// batches of any sizes into the dataset's fixed-size ones. Workers build
// each part's rows with the typed builders; the main thread cuts and joins
// those columns into the dataset's 1,000-row batches without looking at a
// single value: offsets are rebased, value bytes and bitmaps copied.
//
// The result is laid out exactly as arrow-builders.ts lays out the same rows
// built in one go (bitmaps rounded up to 64 bytes, a validity bitmap only when
// the column has a null, a null's placeholder kept as it was), so a batch
// joined from parts serialises to the same IPC bytes as one built whole.
// tests/records/arrow-concatenation.test.ts holds the two to the same bytes.

import { type Data, type DataType, type Int, type List, makeData, RecordBatch, type Struct, Type } from 'apache-arrow';
import { RECORD_ARROW_SCHEMA, RECORD_STRUCT } from './arrow-schema.js';
import { bitmapBytes } from './arrow-builders.js';

/** Rows [start, end) of a column. */
export interface ColumnRange {
  data: Data;
  start: number;
  end: number;
}

function bit(bitmap: Uint8Array, index: number): boolean {
  return (bitmap[index >> 3]! & (1 << (index & 7))) !== 0;
}

/** Whether the column's rows carry a validity bitmap at all (none means every row is valid). */
function hasNulls(data: Data): boolean {
  return data.nullCount > 0 && data.nullBitmap !== undefined && data.nullBitmap.byteLength > 0;
}

function nullsIn(range: ColumnRange): number {
  const { data, start, end } = range;
  if (!hasNulls(data)) return 0;
  let nulls = 0;
  for (let index = start; index < end; index++) if (!bit(data.nullBitmap!, index)) nulls++;
  return nulls;
}

/** Copies bits [start, end) of each range, one after another, into a new bitmap; `read` gives a range's bits (absent: all set). */
function joinBits(ranges: readonly ColumnRange[], length: number, read: (data: Data) => Uint8Array | undefined): Uint8Array {
  const out = new Uint8Array(bitmapBytes(length));
  let at = 0;
  for (const { data, start, end } of ranges) {
    const bits = read(data);
    for (let index = start; index < end; index++, at++) {
      if (bits === undefined || bit(bits, index)) out[at >> 3]! |= 1 << (at & 7);
    }
  }
  return out;
}

/** Rebased offsets for the ranges joined, and for each range the span of values (or child rows) it covers. */
function joinOffsets(ranges: readonly ColumnRange[], length: number): { offsets: Int32Array; spans: { from: number; to: number }[] } {
  const offsets = new Int32Array(length + 1);
  const spans: { from: number; to: number }[] = [];
  let at = 0;
  let base = 0;
  for (const { data, start, end } of ranges) {
    const source = data.valueOffsets as Int32Array;
    const first = source[start]!;
    for (let index = start; index < end; index++) offsets[++at] = base + source[index + 1]! - first;
    const last = source[end]!;
    spans.push({ from: first, to: last });
    base += last - first;
  }
  return { offsets, spans };
}

/**
 * One column holding the rows of every range, in order. `type` is the column
 * type the result carries (the schema's own, so field names and metadata come
 * from it, not from whatever file the ranges were read from).
 */
export function concatenateColumn(type: DataType, ranges: readonly ColumnRange[]): Data {
  // Columns from the builders or read from IPC start at their buffers' first row; a sliced view would need its offset carried into every child.
  for (const range of ranges) if (range.data.offset !== 0) throw new Error('concatenateColumn takes unsliced columns (offset 0)');
  const length = ranges.reduce((sum, range) => sum + range.end - range.start, 0);
  const nullCount = ranges.reduce((sum, range) => sum + nullsIn(range), 0);
  const nullBitmap = nullCount > 0 ? joinBits(ranges, length, (data) => (hasNulls(data) ? data.nullBitmap : undefined)) : undefined;
  switch (type.typeId) {
    case Type.Utf8: {
      const { offsets, spans } = joinOffsets(ranges, length);
      const bytes = new Uint8Array(offsets[length]!);
      let at = 0;
      ranges.forEach((range, index) => {
        const { from, to } = spans[index]!;
        bytes.set((range.data.values as Uint8Array).subarray(from, to), at);
        at += to - from;
      });
      return makeData({ type, length, nullCount, nullBitmap, valueOffsets: offsets, data: bytes } as never);
    }
    case Type.Int: {
      const wide = (type as Int).bitWidth === 64;
      const values = wide ? new BigInt64Array(length) : new Int32Array(length);
      let at = 0;
      for (const { data, start, end } of ranges) {
        values.set((data.values as Int32Array | BigInt64Array).subarray(start, end) as never, at);
        at += end - start;
      }
      return makeData({ type, length, nullCount, nullBitmap, data: values } as never);
    }
    case Type.Bool: {
      const values = joinBits(ranges, length, (data) => data.values as Uint8Array);
      return makeData({ type, length, nullCount, nullBitmap, data: values } as never);
    }
    case Type.List: {
      const { offsets, spans } = joinOffsets(ranges, length);
      const childType = (type as List).children[0]!.type;
      const child = concatenateColumn(
        childType,
        ranges.map((range, index) => ({ data: range.data.children[0]!, start: spans[index]!.from, end: spans[index]!.to })),
      );
      return makeData({ type: type as List, length, nullCount, nullBitmap, valueOffsets: offsets, child });
    }
    case Type.Struct: {
      const children = (type as Struct).children.map((field, position) =>
        concatenateColumn(
          field.type,
          ranges.map((range) => ({ data: range.data.children[position]!, start: range.start, end: range.end })),
        ),
      );
      return makeData({ type: type as Struct, length, nullCount, nullBitmap, children });
    }
    default:
      throw new Error(`no column concatenation for ${String(type)}`);
  }
}

/**
 * Batches of exactly `batchRows` rows (the last one shorter) cut and joined
 * from batches of any sizes, in order: the dataset's batch boundaries do not
 * depend on how the rows were split into parts. No input rows give one empty
 * batch, so a file still carries the schema.
 */
export async function* rebatch(batches: AsyncIterable<RecordBatch> | Iterable<RecordBatch>, batchRows: number): AsyncGenerator<RecordBatch> {
  yield* rebatchRanges(wholeBatches(batches), batchRows);
}

async function* wholeBatches(batches: AsyncIterable<RecordBatch> | Iterable<RecordBatch>): AsyncGenerator<ColumnRange> {
  for await (const batch of batches) yield { data: batch.data, start: 0, end: batch.numRows };
}

/** Like rebatch, from ranges of unsliced record batches' rows (what a caller cutting batches at its own boundaries hands on). */
export async function* rebatchRanges(ranges: AsyncIterable<ColumnRange> | Iterable<ColumnRange>, batchRows: number): AsyncGenerator<RecordBatch> {
  let pending: ColumnRange[] = [];
  let rows = 0;
  let emitted = false;
  const take = (): RecordBatch => {
    const batch = new RecordBatch(RECORD_ARROW_SCHEMA, concatenateColumn(RECORD_STRUCT, pending) as Data<Struct>);
    pending = [];
    rows = 0;
    emitted = true;
    return batch;
  };
  for await (const range of ranges) {
    let start = range.start;
    while (start < range.end) {
      const end = Math.min(range.end, start + batchRows - rows);
      pending.push({ data: range.data, start, end });
      rows += end - start;
      start = end;
      if (rows === batchRows) yield take();
    }
  }
  if (rows > 0 || !emitted) yield take();
}
