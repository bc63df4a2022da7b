import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RecordBatch, RecordBatchStreamWriter, vectorFromArray } from 'apache-arrow';
import { RecordBatchBuilder } from '../../src/records/arrow-builders.js';
import { RECORD_ARROW_SCHEMA, RECORD_STRUCT, recordToRow } from '../../src/records/arrow-schema.js';
import { builtWhole, rowsOf } from '../fixtures/arrow-rows.js';

/** The Arrow IPC stream apache-arrow's row-wise vectorFromArray writes: the bytes the typed builders must match. */
function rowWise(rows: ReturnType<typeof recordToRow>[], batchRows: number): Uint8Array {
  const batches: RecordBatch[] = [];
  for (let start = 0; start < rows.length || batches.length === 0; start += batchRows) {
    batches.push(new RecordBatch(RECORD_ARROW_SCHEMA, vectorFromArray(rows.slice(start, start + batchRows), RECORD_STRUCT).data[0]!));
  }
  return RecordBatchStreamWriter.writeAll(batches).toUint8Array(true);
}

const typed = builtWhole;

describe('typed Arrow builders', () => {
  for (const lane of ['tool-world-v1', 'tool-world-faults-v1']) {
    it(`write the same Arrow bytes as vectorFromArray for ${lane}, whatever the batch size`, () => {
      const rows = rowsOf(lane);
      for (const batchRows of [1000, 16, 7, 1]) {
        assert.ok(Buffer.from(typed(rows, batchRows)).equals(Buffer.from(rowWise(rows, batchRows))), `${lane}, batches of ${batchRows}`);
      }
    });
  }

  it('write the same bytes for an empty batch', () => {
    assert.ok(Buffer.from(typed([], 1000)).equals(Buffer.from(rowWise([], 1000))));
  });

  it('write the same bytes where nested columns are null and where they are not', () => {
    const [row] = rowsOf('tool-world-faults-v1');
    const base = row!;
    const variants = [
      base,
      { ...base, recovery: { ...base.recovery, server_faults: [{ kind: 'crashed' as const, step: 2, detail: 'gone' }] } },
      { ...base, result: { ...base.result, outcome_detail: 'détail — ünïcode ✓ 😀' } },
      { ...base, provenance: { ...base.provenance, lineage: { ...base.provenance.lineage, seed: 2n ** 40n, phrasing: null } } },
      { ...base, task: { ...base.task, tags: [] }, tools: [] },
    ];
    for (const batchRows of [5, 2, 1]) assert.ok(Buffer.from(typed(variants, batchRows)).equals(Buffer.from(rowWise(variants, batchRows))), `batches of ${batchRows}`);
  });

  it('keep a builder reusable: a second batch is built as if the first had not been', () => {
    const rows = rowsOf('tool-world-faults-v1');
    const builder = new RecordBatchBuilder();
    for (const row of rows) builder.append(row);
    builder.finishBatch();
    for (const row of rows.slice(0, 9)) builder.append(row);
    const again = RecordBatchStreamWriter.writeAll([builder.finishBatch()]).toUint8Array(true);
    assert.ok(Buffer.from(again).equals(Buffer.from(rowWise(rows.slice(0, 9), 9))));
  });
});
