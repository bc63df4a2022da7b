// Owns serialising a record batch as an Arrow IPC stream of its own. Kept
// apart from columnar-files.ts so a thread that only builds a part's columns
// (a generation worker) does not load the Parquet encoder's WebAssembly
// (about 18 MB of resident memory per thread).

import { type RecordBatch, RecordBatchStreamWriter } from 'apache-arrow';

/** One batch as a whole Arrow IPC stream (schema, batch, end of stream). */
export function ipcStream(batch: RecordBatch): Uint8Array {
  return RecordBatchStreamWriter.writeAll([batch]).toUint8Array(true);
}
