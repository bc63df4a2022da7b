import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { type RecordBatch, RecordBatchStreamWriter, tableFromIPC } from 'apache-arrow';
import { RecordBatchBuilder } from '../../src/records/arrow-builders.js';
import { concatenateColumn, rebatch } from '../../src/records/arrow-concatenation.js';
import { RECORD_STRUCT } from '../../src/records/arrow-schema.js';
import { arrowFileBatches, writeColumnar, writeColumnarBatches } from '../../src/records/columnar-files.js';
import { ipcStream } from '../../src/records/arrow-ipc.js';
import { builtWhole, rowsOf, type Row } from '../fixtures/arrow-rows.js';
import { REPO_ROOT, temporaryDirectory } from '../helpers.js';

const whole = builtWhole;

/** The rows cut at `cuts` into parts, each built and written to IPC on its own and read back, as a worker's part file is. */
function parts(rows: readonly Row[], cuts: readonly number[]): RecordBatch[] {
  const bounds = [0, ...cuts, rows.length];
  const out: RecordBatch[] = [];
  for (let index = 0; index + 1 < bounds.length; index++) {
    const builder = new RecordBatchBuilder();
    for (const row of rows.slice(bounds[index], bounds[index + 1])) builder.append(row);
    out.push(...tableFromIPC(ipcStream(builder.finishBatch())).batches);
  }
  return out;
}

async function joined(batches: RecordBatch[], batchRows: number): Promise<Uint8Array> {
  const out: RecordBatch[] = [];
  for await (const batch of rebatch(batches, batchRows)) out.push(batch);
  return RecordBatchStreamWriter.writeAll(out).toUint8Array(true);
}

const same = (left: Uint8Array, right: Uint8Array) => Buffer.from(left).equals(Buffer.from(right));

describe('joining Arrow columns built in parts', () => {
  for (const lane of ['tool-world-v1', 'tool-world-faults-v1']) {
    it(`gives the bytes of the rows built in one go, however ${lane} was cut into parts`, async () => {
      const rows = rowsOf(lane);
      assert.ok(rows.length > 20, 'enough rows to cut');
      const cuttings = [[], [1], [7, 8, 19], [rows.length - 1], Array.from({ length: Math.floor(rows.length / 3) }, (_, index) => 3 * (index + 1)).filter((cut) => cut < rows.length)];
      for (const cuts of cuttings) {
        for (const batchRows of [1000, 16, 5, 1]) {
          assert.ok(same(await joined(parts(rows, cuts), batchRows), whole(rows, batchRows)), `${lane}: cut at ${cuts.join(',') || 'nothing'}, batches of ${batchRows}`);
        }
      }
    });
  }

  it('keeps nulls, empty lists, 64-bit seeds and non-ASCII text where they were, across a cut', async () => {
    const [base] = rowsOf('tool-world-faults-v1');
    const rows: Row[] = [
      base!,
      { ...base!, recovery: { ...base!.recovery, server_faults: [{ kind: 'crashed', step: 2, detail: 'gone' }] } },
      { ...base!, result: { ...base!.result, outcome_detail: 'détail — ünïcode ✓ 😀' } },
      { ...base!, provenance: { ...base!.provenance, lineage: { ...base!.provenance.lineage, seed: 2n ** 40n, phrasing: null } } },
      { ...base!, task: { ...base!.task, tags: [] }, tools: [] },
      base!,
    ];
    for (const cuts of [[1], [2, 3], [1, 2, 3, 4, 5], [4]]) {
      for (const batchRows of [6, 4, 2, 1]) assert.ok(same(await joined(parts(rows, cuts), batchRows), whole(rows, batchRows)), `cut at ${cuts.join(',')}, batches of ${batchRows}`);
    }
  });

  it('gives one empty batch for no rows, as a dataset with no records still carries the schema', async () => {
    assert.ok(same(await joined([], 1000), whole([], 1000)));
    assert.ok(same(await joined(parts([], []), 1000), whole([], 1000)));
  });

  it('joins parts that are empty (every episode of a part rejected) as if they were not there', async () => {
    const rows = rowsOf('tool-world-v1').slice(0, 12);
    const batches = [...parts([], []), ...parts(rows.slice(0, 5), []), ...parts([], []), ...parts(rows.slice(5), [])];
    assert.ok(same(await joined(batches, 4), whole(rows, 4)));
  });

  it('refuses a sliced column instead of joining the wrong rows', () => {
    const [batch] = parts(rowsOf('tool-world-v1').slice(0, 4), []);
    assert.throws(() => concatenateColumn(RECORD_STRUCT, [{ data: batch!.data.slice(1, 2), start: 0, end: 1 }]), /unsliced/);
  });
});

describe('joining Arrow files (shards) into the run\'s batches', () => {
  it('reads the files as they stream and writes the bytes of the whole JSONL written at once, Parquet too', async () => {
    const sample = join(REPO_ROOT, 'datasets', 'tool-world-faults-v1', 'episodes.jsonl');
    const lines = readFileSync(sample, 'utf8').trim().split('\n');
    const dir = temporaryDirectory();
    // Three "shards" of uneven sizes, each written in batches of 7 (a shard's own batches never line up with the run's).
    const cuts = [0, 11, 30, lines.length];
    const files: string[] = [];
    for (let index = 0; index + 1 < cuts.length; index++) {
      const jsonl = join(dir, `shard-${index}.jsonl`);
      writeFileSync(jsonl, lines.slice(cuts[index], cuts[index + 1]).join('\n') + '\n');
      await writeColumnar(jsonl, { arrow: join(dir, `shard-${index}.arrow`) }, 7);
      files.push(join(dir, `shard-${index}.arrow`));
    }
    await writeColumnarBatches(rebatch(arrowFileBatches(files), 16), { arrow: join(dir, 'joined.arrow'), parquet: join(dir, 'joined.parquet') }, 16);
    await writeColumnar(sample, { arrow: join(dir, 'whole.arrow'), parquet: join(dir, 'whole.parquet') }, 16);
    assert.ok(readFileSync(join(dir, 'joined.arrow')).equals(readFileSync(join(dir, 'whole.arrow'))), 'Arrow bytes');
    assert.ok(readFileSync(join(dir, 'joined.parquet')).equals(readFileSync(join(dir, 'whole.parquet'))), 'Parquet bytes');
  });
});
