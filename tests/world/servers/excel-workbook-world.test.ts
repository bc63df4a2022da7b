// The excel-workbook world (worlds/excel-workbook.json, data only): the real
// excel-mcp-server on a seeded pair of workbooks lists its pinned catalog,
// gives byte-identical normalised results and snapshots for one seed on two
// fresh sandboxes (its argument errors, whose two parts come in random order,
// included), keeps every path under the sandbox, and seeds near twins.

import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { canonicalJson } from '../../../src/core/canonical-json.js';
import type { ServerWorld } from '../../../src/world/server-world.js';
import { loadWorldFile } from '../../../src/world/world-registry.js';
import { liveAndPinnedCatalog, sessionCalls, type Call } from './server-world-harness.js';

const world = loadWorldFile(fileURLToPath(new URL('../../../worlds/excel-workbook.json', import.meta.url))) as unknown as ServerWorld;
const BOOK = '/workbooks/inventory.xlsx';

function episode(seed: number) {
  return sessionCalls(world, seed, () => {
    const calls: Call[] = [
      ['excel_describe_sheets', { fileAbsolutePath: BOOK }],
      ['excel_read_sheet', { fileAbsolutePath: BOOK, sheetName: 'Stock', range: 'A2:E4' }],
      ['excel_write_to_sheet', { fileAbsolutePath: BOOK, sheetName: 'Stock', newSheet: false, range: 'D3', values: [[7]] }],
      ['excel_copy_sheet', { fileAbsolutePath: BOOK, srcSheetName: 'Stock', dstSheetName: 'Stock backup' }],
      ['excel_create_table', { fileAbsolutePath: BOOK, sheetName: 'Stock', tableName: 'Lines', range: 'A1:E9' }],
      // A relative path reaches the server, whose two-part error comes in random order; repeated to give the order a chance to vary.
      ['excel_describe_sheets', { fileAbsolutePath: 'inventory.xlsx' }],
      ['excel_describe_sheets', { fileAbsolutePath: 'inventory.xlsx' }],
      ['excel_describe_sheets', { fileAbsolutePath: 'inventory.xlsx' }],
      ['excel_describe_sheets', { fileAbsolutePath: '/tmp/elsewhere.xlsx' }],
      ['excel_write_to_sheet', { fileAbsolutePath: BOOK, sheetName: 'Missing', newSheet: false, range: 'A1', values: [[1]] }],
    ];
    return { calls };
  });
}

describe('excel-workbook world', () => {
  it('lists exactly the pinned catalog', async () => {
    const { listed, pinned } = await liveAndPinnedCatalog(world, new URL('../../../worlds/excel-workbook.catalog.json', import.meta.url));
    assert.equal(canonicalJson(listed as never), canonicalJson(pinned as never));
  });

  it('gives byte-identical normalised results and snapshots for the same seed on two fresh sandboxes', async () => {
    const a = await episode(3);
    const b = await episode(3);
    assert.equal(canonicalJson(a.initial), canonicalJson(b.initial));
    assert.equal(canonicalJson(a.results as never), canonicalJson(b.results as never));
    assert.equal(canonicalJson(a.final), canonicalJson(b.final));
    const relative = a.results[5]!.result.content as Array<{ text: string }>;
    assert.deepEqual(relative.map((part) => part.text), ["Invalid argument: Path 'inventory.xlsx' is not absolute", "Invalid argument: Path 'inventory.xlsx' is not absolute"]);
    assert.match(canonicalJson(a.results[8]!.result as never), /Refused by workbooks-in-sandbox/);
    assert.equal(a.final.stock['3'][3], 7);
    assert.deepEqual(a.final.inventory['Stock backup'].rows, a.final.inventory.Stock.rows);
    assert.deepEqual(a.final.inventory_book.tables, [{ sheet: 'Stock', name: 'Lines', ref: 'A1:E9' }]);
    assert.ok(!/\/[^"\s]+\/workbooks\b/.test(canonicalJson(a.results as never)), 'no real sandbox path reaches a result');
  });

  it('seeds near twins and differs between seeds', async () => {
    const a = await episode(0);
    const c = await episode(1);
    assert.notEqual(canonicalJson(a.initial), canonicalJson(c.initial));
    const stock = a.initial.stock;
    assert.equal(stock['2'][1], stock['4'][1]);
    assert.notEqual(stock['2'][2], stock['4'][2]);
    assert.notEqual(stock['2'][3], stock['4'][3]);
  });
});
