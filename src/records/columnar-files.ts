// Owns the columnar copies of a dataset: episodes.arrow (Arrow IPC stream
// format, so a cut-short file stays readable up to its last whole batch) and
// episodes.parquet, both written in batches of 1,000 rows (one Parquet row
// group each), so memory stays flat however many episodes. `generate` feeds
// them the Arrow columns its parts built (generation/part-columns.ts); every
// other writer, from a JSONL file of records.
//
// Each batch is built with typed column builders (arrow-builders.ts) and
// serialised to Arrow IPC once: the stream file is the schema message, every
// batch's message and the end-of-stream marker; Parquet is encoded
// (parquet-wasm, ZSTD) from the same batches, fed 100 rows at a time.

import { closeSync, createWriteStream, fsyncSync, openSync, writeSync } from 'node:fs';
import { Writable } from 'node:stream';
import type { RecordBatch } from 'apache-arrow';
import * as parquet from 'parquet-wasm';
import type { EpisodeRecord } from './episode-record.js';
import { readLines } from './jsonl.js';
import { RecordBatchBuilder } from './arrow-builders.js';
import { arrowStreamBatches, ipcStream } from './arrow-ipc.js';
import { recordToRow } from './arrow-schema.js';

export const BATCH_ROWS = 1000;

/** Batches of Arrow rows from records, in order; an empty input still gives one (empty) batch, so both files carry the schema. */
export function* recordBatches(records: Iterable<EpisodeRecord>, batchRows = BATCH_ROWS): Generator<RecordBatch> {
  const builder = new RecordBatchBuilder();
  let emitted = false;
  for (const record of records) {
    builder.append(recordToRow(record));
    if (builder.numRows >= batchRows) {
      yield builder.finishBatch();
      emitted = true;
    }
  }
  if (builder.numRows > 0 || !emitted) yield builder.finishBatch();
}

/** The records of a JSONL file written by the factory (every terminated line a whole record), in file order. */
async function* jsonlRecords(jsonlPath: string): AsyncGenerator<EpisodeRecord> {
  for await (const line of readLines(jsonlPath)) {
    if (!line.terminated || line.text.trim() === '') continue;
    yield JSON.parse(line.text) as EpisodeRecord;
  }
}

/** Batches of Arrow rows read from a JSONL file of records, in file order. */
async function* arrowBatches(jsonlPath: string, batchRows: number): AsyncGenerator<RecordBatch> {
  const builder = new RecordBatchBuilder();
  let emitted = false;
  for await (const record of jsonlRecords(jsonlPath)) {
    builder.append(recordToRow(record));
    if (builder.numRows >= batchRows) {
      yield builder.finishBatch();
      emitted = true;
    }
  }
  // An empty dataset still gets one (empty) batch, so both files carry the schema.
  if (builder.numRows > 0 || !emitted) yield builder.finishBatch();
}

/** The record batches of Arrow IPC stream files, one file after another, read as they stream (no file is held whole). */
export async function* arrowFileBatches(paths: readonly string[]): AsyncGenerator<RecordBatch> {
  for (const path of paths) {
    yield* arrowStreamBatches(path);
  }
}

/** The Arrow IPC stream's end-of-stream marker: a continuation token and a zero length. */
const END_OF_STREAM = new Uint8Array([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);

/** One batch as an Arrow IPC stream of its own (schema, batch, end), and where its schema message ends. */
export interface IpcBatch {
  stream: Uint8Array;
  schemaEnd: number;
  rows: number;
}

/**
 * Serialises a batch once. The stream's messages are framed (continuation
 * token, metadata length, metadata, body), so the schema message and the
 * batch message can be cut apart: a whole file is the schema once, then each
 * batch's message, then the end marker, byte for byte what apache-arrow's
 * stream writer writes for all the batches together.
 */
export function ipcBatch(batch: RecordBatch): IpcBatch {
  const stream = ipcStream(batch);
  const view = new DataView(stream.buffer, stream.byteOffset, stream.byteLength);
  if (view.getUint32(0, true) !== 0xffffffff) throw new Error('an Arrow IPC stream that does not start with a continuation token');
  return { stream, schemaEnd: 8 + view.getInt32(4, true), rows: batch.numRows };
}

export function batchMessage(batch: IpcBatch): Uint8Array {
  return batch.stream.subarray(batch.schemaEnd, batch.stream.byteLength - END_OF_STREAM.byteLength);
}

function writeAll(fd: number, bytes: Uint8Array): void {
  let offset = 0;
  while (offset < bytes.byteLength) offset += writeSync(fd, bytes, offset, bytes.byteLength - offset);
}

/** An Arrow IPC stream file written batch by batch: the schema message before the first. */
class ArrowStreamFile {
  private readonly fd: number;
  private started = false;

  constructor(path: string) {
    this.fd = openSync(path, 'w');
  }

  write(batch: IpcBatch): void {
    if (!this.started) writeAll(this.fd, batch.stream.subarray(0, batch.schemaEnd));
    this.started = true;
    writeAll(this.fd, batchMessage(batch));
  }

  close(): void {
    writeAll(this.fd, END_OF_STREAM);
    fsyncSync(this.fd);
    closeSync(this.fd);
  }

  /** Closes the file as it is, without the end marker: the write failed or was abandoned. */
  discard(): void {
    closeSync(this.fd);
  }
}

/**
 * Rows handed to the Parquet encoder at a time. Its WebAssembly memory grows
 * to fit the largest input it has held and never shrinks: fed whole 1,000-row
 * batches (about 20 MB of text) it grew past 110 MB, fed 100 rows at a time
 * it stays near 35 MB, and encodes no slower. Row groups are still 1,000 rows.
 */
const PARQUET_FEED_ROWS = 100;

function toWasmBatch(batch: RecordBatch): parquet.RecordBatch {
  const table = parquet.Table.fromIPCStream(ipcStream(batch));
  const wasmBatch = table.recordBatch(0)!;
  table.free();
  return wasmBatch;
}

/** A batch as the pieces the Parquet encoder is fed; an empty batch stays one (empty) piece, so the file gets its schema. */
function feedPieces(batch: RecordBatch): RecordBatch[] {
  if (batch.numRows <= PARQUET_FEED_ROWS) return [batch];
  const pieces: RecordBatch[] = [];
  for (let start = 0; start < batch.numRows; start += PARQUET_FEED_ROWS) pieces.push(batch.slice(start, Math.min(batch.numRows, start + PARQUET_FEED_ROWS)));
  return pieces;
}

/**
 * Parquet writer settings: ZSTD, one row group per batch, no dictionary
 * pages. Dictionary encoding tripled the encoding time of a record's long
 * JSON strings and saved about 1% of the file (ZSTD finds the repeats anyway).
 */
function parquetProperties(batchRows: number): parquet.WriterProperties {
  return new parquet.WriterPropertiesBuilder().setCompression(parquet.Compression.ZSTD).setMaxRowGroupSize(batchRows).setDictionaryEnabled(false).build();
}

export interface ColumnarOutputs {
  arrow?: string;
  parquet?: string;
}

/**
 * Writes the records of a JSONL file (written by the factory, so every line
 * is a whole record) as Arrow and/or Parquet. Returns the number of rows.
 */
export async function writeColumnar(jsonlPath: string, outputs: ColumnarOutputs, batchRows = BATCH_ROWS): Promise<number> {
  if (!outputs.arrow && !outputs.parquet) {
    // Nothing to write (a JSONL-only run): the rows are still read and shaped,
    // so a line that is not a record fails as before, but no Arrow vectors are
    // built only to be dropped.
    let rowCount = 0;
    for await (const record of jsonlRecords(jsonlPath)) {
      recordToRow(record);
      rowCount++;
    }
    return rowCount;
  }
  return writeColumnarBatches(arrowBatches(jsonlPath, batchRows), outputs, batchRows);
}

/**
 * Writes record batches (each at most `batchRows` rows; at least one, so the
 * files carry the schema) as Arrow and/or Parquet. Returns the number of rows.
 */
export async function writeColumnarBatches(batches: AsyncIterable<RecordBatch> | Iterable<RecordBatch>, outputs: ColumnarOutputs, batchRows = BATCH_ROWS): Promise<number> {
  let rowCount = 0;
  const arrowFile = outputs.arrow ? new ArrowStreamFile(outputs.arrow) : undefined;
  const iterator = Symbol.asyncIterator in batches ? batches[Symbol.asyncIterator]() : batches[Symbol.iterator]();
  const next = async (): Promise<RecordBatch | undefined> => {
    const step = await iterator.next();
    if (step.done) return undefined;
    rowCount += step.value.numRows;
    arrowFile?.write(ipcBatch(step.value));
    return step.value;
  };

  try {
    if (outputs.parquet) {
      let pieces: RecordBatch[] = [];
      const source = new ReadableStream<parquet.RecordBatch>({
        async pull(controller) {
          if (pieces.length === 0) {
            const batch = await next();
            if (!batch) return controller.close();
            pieces = feedPieces(batch);
          }
          controller.enqueue(toWasmBatch(pieces.shift()!));
        },
      });
      const bytes = await parquet.transformParquetStream(source, parquetProperties(batchRows));
      await bytes.pipeTo(Writable.toWeb(createWriteStream(outputs.parquet)));
    } else {
      while (await next());
    }
  } catch (error) {
    arrowFile?.discard();
    throw error;
  }
  arrowFile?.close();
  return rowCount;
}
