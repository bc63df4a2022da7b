// Owns reading the columnar copies back (episodes.arrow, episodes.parquet),
// batch by batch so memory stays flat, and comparing their rows with the
// records they were written from: the schema column by column, then each row
// value by value, naming the first column that differs. The comparison walks
// Arrow's buffers directly (offsets, bytes, bitmaps) instead of building a
// JavaScript object per row, so it costs little next to reading the JSONL.

import { openAsBlob } from 'node:fs';
import { type Data, type DataType, type Field, type Int, type List, type RecordBatch, RecordBatchReader, type Struct, Type } from 'apache-arrow';
import { arrowStreamBatches } from './arrow-ipc.js';
import { RECORD_FIELDS, type recordToRow } from './arrow-schema.js';

/** One row as recordToRow shapes it: what a copy must hold for a record. */
export type ExpectedRow = ReturnType<typeof recordToRow>;

/**
 * The record batches of a columnar copy, in file order, read as they are
 * needed: an Arrow IPC stream from a file stream, a Parquet file row group by
 * row group through its footer. Throws where the file stops decoding.
 */
/**
 * Rows decoded from Parquet at a time, one row group at a time: the WebAssembly
 * memory that decodes them grows to its largest batch and never shrinks, and
 * 1,000 rows of records (a row group) took 240 MB to read where 256 took 170.
 */
const PARQUET_READ_ROWS = 256;

export async function* readColumnarBatches(path: string): AsyncGenerator<RecordBatch> {
  if (path.endsWith('.parquet')) {
    // Loaded here, not at the top: most processes that read a dataset never open a Parquet file.
    const parquet = await import('parquet-wasm');
    const file = await parquet.ParquetFile.fromFile(await openAsBlob(path));
    try {
      const stream = (await file.stream({ batchSize: PARQUET_READ_ROWS, concurrency: 1 })) as ReadableStream<import('parquet-wasm').RecordBatch>;
      for await (const wasmBatch of stream) {
        // intoIPCStream hands the batch's memory over; nothing is left to free.
        for (const batch of RecordBatchReader.from(wasmBatch.intoIPCStream())) yield batch;
      }
    } finally {
      file.free();
    }
    return;
  }
  yield* arrowStreamBatches(path);
}

function describeType(type: DataType): string {
  return String(type);
}

/**
 * Where a copy's columns depart from the record schema: a column missing,
 * added, out of order, of another type or nullability. Empty when they are the
 * columns the factory writes. List items are compared by type, not by name
 * (Parquet writers name them differently).
 */
export function schemaDifferences(actual: readonly Field[], expected: readonly Field[] = RECORD_FIELDS, prefix = ''): string[] {
  const problems: string[] = [];
  const count = Math.max(actual.length, expected.length);
  for (let position = 0; position < count; position++) {
    const want = expected[position];
    const have = actual[position];
    if (!want) {
      problems.push(`column ${prefix}${have!.name} is not a column of the record schema`);
      continue;
    }
    const column = `${prefix}${want.name}`;
    if (!have) {
      problems.push(`column ${column} is missing`);
      continue;
    }
    if (have.name !== want.name) {
      problems.push(`column ${column} is missing at position ${position} (found ${prefix}${have.name})`);
      continue;
    }
    problems.push(...typeDifferences(have.type, want.type, column));
    if (have.nullable !== want.nullable) problems.push(`column ${column} is ${have.nullable ? '' : 'not '}nullable, the record schema says ${want.nullable ? '' : 'not '}nullable`);
  }
  return problems;
}

function typeDifferences(have: DataType, want: DataType, column: string): string[] {
  if (have.typeId !== want.typeId) return [`column ${column} is ${describeType(have)}, the record schema says ${describeType(want)}`];
  if (want.typeId === Type.Int) {
    const [h, w] = [have as Int, want as Int];
    return h.bitWidth === w.bitWidth && h.isSigned === w.isSigned ? [] : [`column ${column} is ${describeType(have)}, the record schema says ${describeType(want)}`];
  }
  if (want.typeId === Type.List) {
    const [h, w] = [(have as List).children[0]!, (want as List).children[0]!];
    const problems = typeDifferences(h.type, w.type, `${column}[]`);
    if (h.nullable !== w.nullable) problems.push(`column ${column}[] items are ${h.nullable ? '' : 'not '}nullable, the record schema says ${w.nullable ? '' : 'not '}nullable`);
    return problems;
  }
  if (want.typeId === Type.Struct) return schemaDifferences((have as Struct).children, (want as Struct).children, `${column}.`);
  return [];
}

export interface ColumnDifference {
  /** The column and, inside lists, the item: `messages[4].content`. */
  column: string;
  /** The value the record has, shortened for a message. */
  expected: string;
  /** The value the copy has, shortened the same way. */
  actual: string;
}

const decoder = new TextDecoder();
const EXCERPT = 48;

/** Both strings cut around their first difference, so a one-character edit shows. */
function excerpts(expected: string, actual: string): [string, string] {
  let first = 0;
  while (first < expected.length && first < actual.length && expected[first] === actual[first]) first++;
  const longest = Math.max(expected.length, actual.length);
  const start = longest <= EXCERPT ? 0 : Math.max(0, Math.min(first - EXCERPT / 2, longest - EXCERPT));
  const cut = (text: string) => `${start > 0 ? '…' : ''}${JSON.stringify(text.slice(start, start + EXCERPT)).slice(1, -1)}${start + EXCERPT < text.length ? '…' : ''}`;
  return [`"${cut(expected)}"`, `"${cut(actual)}"`];
}

function shown(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'bigint') return String(value);
  const text = JSON.stringify(value) ?? String(value);
  return text.length > EXCERPT ? `${text.slice(0, EXCERPT)}…` : text;
}

function actualScalar(data: Data, index: number): unknown {
  switch (data.type.typeId) {
    case Type.Utf8: {
      const offsets = data.valueOffsets as Int32Array;
      return decoder.decode((data.values as Uint8Array).subarray(offsets[index]!, offsets[index + 1]!));
    }
    case Type.Bool: {
      const bit = data.offset + index;
      return ((data.values as Uint8Array)[bit >> 3]! & (1 << (bit % 8))) !== 0;
    }
    case Type.Int:
      return (data.values as Int32Array | BigInt64Array)[index];
    default:
      return `(${describeType(data.type)})`;
  }
}

/**
 * The first place where row `index` of `data` (a struct of the record's
 * columns, or any column below it) differs from `expected`, or undefined when
 * they are equal. `data`'s type must be the record schema's (see
 * schemaDifferences).
 */
export function valueDifference(data: Data, index: number, expected: unknown, column: string): ColumnDifference | undefined {
  const valid = data.getValid(index);
  if (expected === null || expected === undefined) return valid ? { column, expected: 'null', actual: shown(actualScalar(data, index)) } : undefined;
  if (!valid) return { column, expected: shown(expected), actual: 'null' };
  switch (data.type.typeId) {
    case Type.Utf8: {
      const actual = actualScalar(data, index) as string;
      if (actual === expected) return undefined;
      if (typeof expected !== 'string') return { column, expected: shown(expected), actual: shown(actual) };
      const [want, have] = excerpts(expected, actual);
      return { column, expected: want, actual: have };
    }
    case Type.Bool:
    case Type.Int: {
      const actual = actualScalar(data, index);
      return actual === expected ? undefined : { column, expected: shown(expected), actual: shown(actual) };
    }
    case Type.List: {
      const offsets = data.valueOffsets as Int32Array;
      const [begin, end] = [offsets[index]!, offsets[index + 1]!];
      if (!Array.isArray(expected)) return { column, expected: shown(expected), actual: `a list of ${end - begin}` };
      if (end - begin !== expected.length) return { column, expected: `${expected.length} item${expected.length === 1 ? '' : 's'}`, actual: `${end - begin} item${end - begin === 1 ? '' : 's'}` };
      const items = data.children[0]!;
      for (let item = 0; item < expected.length; item++) {
        const difference = valueDifference(items, begin + item, expected[item], `${column}[${item}]`);
        if (difference) return difference;
      }
      return undefined;
    }
    case Type.Struct: {
      if (typeof expected !== 'object') return { column, expected: shown(expected), actual: 'a struct' };
      const fields = (data.type as Struct).children;
      for (const [position, field] of fields.entries()) {
        const difference = valueDifference(data.children[position]!, index, (expected as Record<string, unknown>)[field.name], column ? `${column}.${field.name}` : field.name);
        if (difference) return difference;
      }
      return undefined;
    }
    default:
      return { column, expected: shown(expected), actual: `a value of type ${describeType(data.type)}, which records never have` };
  }
}

/** The first column where row `index` of a batch differs from the record's row. */
export function rowDifference(batch: RecordBatch, index: number, expected: ExpectedRow): ColumnDifference | undefined {
  return valueDifference(batch.data, index, expected, '');
}

/** The record_id a copy holds at a row, for naming a row the JSONL does not have. */
export function recordIdAt(batch: RecordBatch, index: number): string | undefined {
  const column = batch.getChild('record_id');
  const value = column?.get(index);
  return typeof value === 'string' ? value : undefined;
}
