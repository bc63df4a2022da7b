// Owns the Arrow IPC stream format at its two ends: serialising a record
// batch as a stream of its own, and reading a stream file batch by batch.
// Kept apart from columnar-files.ts so a thread that only builds a part's
// columns (a generation worker) does not load the Parquet encoder's
// WebAssembly (about 18 MB of resident memory per thread).

import { open } from 'node:fs/promises';
import { type RecordBatch, RecordBatchReader, RecordBatchStreamWriter } from 'apache-arrow';

/** One batch as a whole Arrow IPC stream (schema, batch, end of stream). */
export function ipcStream(batch: RecordBatch): Uint8Array {
  return RecordBatchStreamWriter.writeAll([batch]).toUint8Array(true);
}

/**
 * The batches of an Arrow IPC stream file, one at a time. Read through a
 * file handle, each message is read at its own size: from a read stream,
 * apache-arrow joins 64 KB chunks into every batch's body, and reading a
 * 390 MB file so peaked at 290 MB of resident memory against 170 here.
 */
export async function* arrowStreamBatches(path: string): AsyncGenerator<RecordBatch> {
  const handle = await open(path);
  try {
    for await (const batch of await RecordBatchReader.from(handle)) yield batch;
  } finally {
    await handle.close().catch(() => undefined);
  }
}
