// Owns the columnar copies of a dataset: episodes.arrow (Arrow IPC stream
// format, so a cut-short file stays readable up to its last whole batch) and
// episodes.parquet, both written from episodes.jsonl in batches of 1,000 rows
// (one Parquet row group each), so memory stays flat however many episodes.

import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { Writable } from 'node:stream';
import { RecordBatch, RecordBatchStreamWriter, vectorFromArray } from 'apache-arrow';
import * as parquet from 'parquet-wasm';
import type { EpisodeRecord } from './episode-record.js';
import { readLines } from './jsonl.js';
import { RECORD_ARROW_SCHEMA, RECORD_STRUCT, recordToRow } from './arrow-schema.js';

export const ARROW_FILE = 'episodes.arrow';
export const PARQUET_FILE = 'episodes.parquet';
export const BATCH_ROWS = 1000;
export const COLUMNAR_FORMATS = ['arrow', 'parquet'] as const;
export type ColumnarFormat = (typeof COLUMNAR_FORMATS)[number];

/** Batches of Arrow rows read from a JSONL file of records, in file order. */
async function* arrowBatches(jsonlPath: string, batchRows: number): AsyncGenerator<RecordBatch> {
  let rows: ReturnType<typeof recordToRow>[] = [];
  let emitted = false;
  for await (const line of readLines(jsonlPath)) {
    if (!line.terminated || line.text.trim() === '') continue;
    rows.push(recordToRow(JSON.parse(line.text) as EpisodeRecord));
    if (rows.length >= batchRows) {
      yield toBatch(rows);
      emitted = true;
      rows = [];
    }
  }
  // An empty dataset still gets one (empty) batch, so both files carry the schema.
  if (rows.length > 0 || !emitted) yield toBatch(rows);
}

function toBatch(rows: ReturnType<typeof recordToRow>[]): RecordBatch {
  return new RecordBatch(RECORD_ARROW_SCHEMA, vectorFromArray(rows, RECORD_STRUCT).data[0]!);
}

function toWasmBatch(batch: RecordBatch): parquet.RecordBatch {
  const table = parquet.Table.fromIPCStream(RecordBatchStreamWriter.writeAll([batch]).toUint8Array(true));
  const wasmBatch = table.recordBatch(0)!;
  table.free();
  return wasmBatch;
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
  let arrowWriter: RecordBatchStreamWriter | undefined;
  let arrowFile: WriteStream | undefined;
  if (outputs.arrow) {
    arrowWriter = new RecordBatchStreamWriter();
    arrowFile = createWriteStream(outputs.arrow);
    arrowWriter.toNodeStream().pipe(arrowFile);
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

  if (arrowWriter && arrowFile) {
    arrowWriter.finish();
    if (!arrowFile.writableFinished) await once(arrowFile, 'finish');
  }
  return rowCount;
}
