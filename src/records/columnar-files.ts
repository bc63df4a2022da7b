// Owns the columnar copies of a dataset: episodes.arrow (Arrow IPC stream
// format, so a cut-short file stays readable up to its last whole batch) and
// episodes.parquet, both written from episodes.jsonl in batches of 1,000 rows
// (one Parquet row group each), so memory stays flat however many episodes.

import { closeSync, createWriteStream, fsyncSync, openSync, writeSync } from 'node:fs';
import { Writable } from 'node:stream';
import { AsyncByteQueue, type RecordBatch, RecordBatchStreamWriter } from 'apache-arrow';
import * as parquet from 'parquet-wasm';
import type { EpisodeRecord } from './episode-record.js';
import { readLines } from './jsonl.js';
import { RecordBatchBuilder } from './arrow-builders.js';
import { recordToRow } from './arrow-schema.js';

export { ARROW_FILE, COLUMNAR_FORMATS, PARQUET_FILE, type ColumnarFormat } from './columnar-names.js';
export const BATCH_ROWS = 1000;

/** Batches of Arrow rows read from a JSONL file of records, in file order. */
async function* arrowBatches(jsonlPath: string, batchRows: number): AsyncGenerator<RecordBatch> {
  const builder = new RecordBatchBuilder();
  let emitted = false;
  for await (const line of readLines(jsonlPath)) {
    if (!line.terminated || line.text.trim() === '') continue;
    builder.append(recordToRow(JSON.parse(line.text) as EpisodeRecord));
    if (builder.numRows >= batchRows) {
      yield builder.finishBatch();
      emitted = true;
    }
  }
  // An empty dataset still gets one (empty) batch, so both files carry the schema.
  if (builder.numRows > 0 || !emitted) yield builder.finishBatch();
}

function toWasmBatch(batch: RecordBatch): parquet.RecordBatch {
  const table = parquet.Table.fromIPCStream(RecordBatchStreamWriter.writeAll([batch]).toUint8Array(true));
  const wasmBatch = table.recordBatch(0)!;
  table.free();
  return wasmBatch;
}

/**
 * The Arrow writer's byte sink, writing each chunk to the file as it comes.
 * Its default sink queues chunks for a piped stream without backpressure, so
 * a big dataset would sit in memory until the end.
 */
class FileByteSink extends AsyncByteQueue {
  constructor(private readonly fd: number) {
    super();
  }

  override write(value: Parameters<AsyncByteQueue['write']>[0]): void {
    const bytes = value instanceof Uint8Array ? value : new Uint8Array(value as ArrayBuffer);
    let offset = 0;
    while (offset < bytes.byteLength) offset += writeSync(this.fd, bytes, offset, bytes.byteLength - offset);
  }
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
  let rowCount = 0;
  if (!outputs.arrow && !outputs.parquet) {
    // Nothing to write (a JSONL-only run): the rows are still read and shaped,
    // so a line that is not a record fails as before, but no Arrow vectors are
    // built only to be dropped.
    for await (const line of readLines(jsonlPath)) {
      if (!line.terminated || line.text.trim() === '') continue;
      recordToRow(JSON.parse(line.text) as EpisodeRecord);
      rowCount++;
    }
    return rowCount;
  }
  let arrowWriter: RecordBatchStreamWriter | undefined;
  let arrowFd: number | undefined;
  if (outputs.arrow) {
    arrowFd = openSync(outputs.arrow, 'w');
    arrowWriter = new RecordBatchStreamWriter();
    arrowWriter.reset(new FileByteSink(arrowFd));
  }
  const batches = arrowBatches(jsonlPath, batchRows);
  const next = async (): Promise<RecordBatch | undefined> => {
    const step = await batches.next();
    if (step.done) return undefined;
    rowCount += step.value.numRows;
    arrowWriter?.write(step.value);
    return step.value;
  };

  if (outputs.parquet) {
    const source = new ReadableStream<parquet.RecordBatch>({
      async pull(controller) {
        const batch = await next();
        if (batch) controller.enqueue(toWasmBatch(batch));
        else controller.close();
      },
    });
    const properties = new parquet.WriterPropertiesBuilder()
      .setCompression(parquet.Compression.ZSTD)
      .setMaxRowGroupSize(batchRows)
      .build();
    const bytes = await parquet.transformParquetStream(source, properties);
    await bytes.pipeTo(Writable.toWeb(createWriteStream(outputs.parquet)));
  } else {
    while (await next());
  }

  if (arrowWriter && arrowFd !== undefined) {
    arrowWriter.finish();
    fsyncSync(arrowFd);
    closeSync(arrowFd);
  }
  return rowCount;
}
