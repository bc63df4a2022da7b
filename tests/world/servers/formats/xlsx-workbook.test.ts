// Tests the xlsx file format: the same value gives the same bytes, values round
// trip, bad values and bad files are refused, and the real excel-mcp-server
// (excelize) reads what we write and we read what it writes back.

import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { FactoryError } from '../../../../src/core/errors.js';
import type { JsonValue } from '../../../../src/core/json-value.js';
import { fileFormat, fileFormatNames } from '../../../../src/world/servers/formats/file-formats.js';
import { readZip, writeZip } from '../../../../src/world/servers/formats/zip-archive.js';

const xlsx = fileFormat('xlsx');

const BOOK: JsonValue = {
  sheets: [
    {
      name: 'Sheet1',
      rows: [
        ['Name', 'Qty', 'Note'],
        ['apple', 3, '  two spaces & <tags> "quotes"\nnext line '],
        ['pear', 4.25, true],
        ['Total', { formula: 'SUM(B2:B3)', value: 7.25 }, null],
      ],
      columns: [20, null, 30],
    },
    { name: 'Empty', rows: [] },
    { name: 'Ünïcode ✓', rows: [[null, 'apple'], [false, { formula: 'A1&"x"', value: 'x' }]] },
  ],
};

const BINARY = fileURLToPath(new URL('../../../../node_modules/@negokaz/excel-mcp-server/dist/excel-mcp-server_linux_amd64_v1/excel-mcp-server', import.meta.url));

function refused(run: () => unknown, pattern: RegExp): void {
  assert.throws(run, (error: unknown) => error instanceof FactoryError && pattern.test(error.message));
}

describe('xlsx file format', () => {
  it('is registered under its name', () => {
    assert.ok(fileFormatNames().includes('xlsx'));
  });

  it('encodes the same value to the same bytes', () => {
    const first = xlsx.encode(BOOK);
    assert.deepEqual(first, xlsx.encode(structuredClone(BOOK)));
    const parts = readZip(first).map((entry) => entry.name);
    assert.deepEqual(parts, ['[Content_Types].xml', '_rels/.rels', 'xl/workbook.xml', 'xl/_rels/workbook.xml.rels', 'xl/styles.xml', 'xl/worksheets/sheet1.xml', 'xl/worksheets/sheet2.xml', 'xl/worksheets/sheet3.xml', 'xl/sharedStrings.xml']);
    const sheet = readZip(first).find((entry) => entry.name === 'xl/worksheets/sheet1.xml')!.data.toString();
    assert.match(sheet, /<dimension ref="A1:C4"\/>/);
  });

  it('decodes what it encodes: values, formulas, empty cells, dense rows', () => {
    assert.deepEqual(xlsx.decode(xlsx.encode(BOOK)), {
      sheets: [
        {
          name: 'Sheet1',
          dimension: 'A1:C4',
          rows: [
            ['Name', 'Qty', 'Note'],
            ['apple', 3, '  two spaces & <tags> "quotes"\nnext line '],
            ['pear', 4.25, true],
            ['Total', { formula: 'SUM(B2:B3)', value: 7.25 }, null],
          ],
        },
        { name: 'Empty', dimension: 'A1', rows: [] },
        { name: 'Ünïcode ✓', dimension: 'A1:B2', rows: [[null, 'apple'], [false, { formula: 'A1&"x"', value: 'x' }]] },
      ],
    });
  });

  it('refuses values that are not workbooks, naming the field', () => {
    refused(() => xlsx.encode({ sheets: [] }), /\/sheets: is empty/);
    refused(() => xlsx.encode({ sheets: [{ name: 'a/b', rows: [] }] }), /\/sheets\/0\/name/);
    refused(() => xlsx.encode({ sheets: [{ name: 'A', rows: [] }, { name: 'a', rows: [] }] }), /names a sheet twice/);
    refused(() => xlsx.encode({ sheets: [{ name: 'A', rows: [[{ nope: 1 }]] }] }), /\/sheets\/0\/rows\/0\/0/);
    refused(() => xlsx.encode({ sheets: [{ name: 'A', rows: [['bell\u0007']] }] }), /control character/);
  });

  it('reads entities, character references, CDATA, rich text and inline strings the way XML says', () => {
    const book = readZip(xlsx.encode({ sheets: [{ name: 'S', rows: [['x']] }] }));
    const sheet = '<?xml version="1.0"?><!-- c --><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><dimension ref="A1:D1"/><sheetData><row r="1">'
      + '<c r="A1" t="inlineStr"><is><t xml:space="preserve"> &lt;a&gt; &amp; &quot;b&quot; &apos;c&apos; &#65;&#x42;</t></is></c>'
      + '<c r="B1" t="s"><v>0</v></c><c r="C1" t="inlineStr"><is><t><![CDATA[<raw> & ]]></t></is></c><c r="D1" t="e"><v>#DIV/0!</v></c></row></sheetData></worksheet>';
    const strings = '<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><si><r><rPr><b/></rPr><t>bold</t></r><r><t xml:space="preserve"> plain</t></r><rPh><t>ignored</t></rPh></si></sst>';
    const patched = book.map((entry) => (entry.name === 'xl/worksheets/sheet1.xml' ? { name: entry.name, data: Buffer.from(sheet) } : entry.name === 'xl/sharedStrings.xml' ? { name: entry.name, data: Buffer.from(strings) } : entry));
    assert.deepEqual(xlsx.decode(writeZip(patched)), {
      sheets: [{ name: 'S', dimension: 'A1:D1', rows: [[' <a> & "b" \'c\' AB', 'bold plain', '<raw> & ', { error: '#DIV/0!' }]] }],
    });
    // No dimension and no cell references: positions follow the order written; the rows reach the last cell.
    const implicit = '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row><c><v>1</v></c><c><v>2</v></c></row><row r="3"><c r="B3"><v>3</v></c></row></sheetData></worksheet>';
    const implicitBook = book.map((entry) => (entry.name === 'xl/worksheets/sheet1.xml' ? { name: entry.name, data: Buffer.from(implicit) } : entry));
    assert.deepEqual(xlsx.decode(writeZip(implicitBook)), { sheets: [{ name: 'S', dimension: 'A1:B3', rows: [[1, 2], [null, null], [null, 3]] }] });
    const broken = book.map((entry) => (entry.name === 'xl/worksheets/sheet1.xml' ? { name: entry.name, data: Buffer.from('<worksheet><sheetData></worksheet>') } : entry));
    refused(() => xlsx.decode(writeZip(broken)), /sheet1\.xml: malformed XML .*closes <sheetData>/);
    const entity = book.map((entry) => (entry.name === 'xl/workbook.xml' ? { name: entry.name, data: Buffer.from('<!DOCTYPE x [<!ENTITY a "b">]><workbook/>') } : entry));
    refused(() => xlsx.decode(writeZip(entity)), /document type declarations are not read/);
    refused(() => xlsx.decode(Buffer.from('PK not really')), /zip/);
  });
});

type Call = [name: string, args: Record<string, unknown>];

/** Runs `calls` on the real server against `file`, one child for all, and returns each result's text. */
async function serverCalls(file: string, calls: Call[]): Promise<Array<{ text: string; isError: boolean }>> {
  const client = new Client({ name: 'xlsx-format-test', version: '1' });
  const transport = new StdioClientTransport({ command: BINARY, args: [], stderr: 'ignore' });
  await client.connect(transport);
  const pid = transport.pid;
  try {
    const results: Array<{ text: string; isError: boolean }> = [];
    for (const [name, args] of calls) {
      const result = (await client.callTool({ name, arguments: { fileAbsolutePath: file, ...args } })) as CallToolResult;
      results.push({ text: result.content.map((part) => (part.type === 'text' ? part.text : '')).join(''), isError: result.isError === true });
    }
    return results;
  } finally {
    await client.close();
    if (pid !== null) {
      try {
        process.kill(pid, 0);
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone: close ended it
      }
    }
  }
}

const EDITS: Call[] = [
  ['excel_write_to_sheet', { sheetName: 'Sheet1', newSheet: false, range: 'A5:C5', values: [['kiwi', 9, '=B2*2']] }],
  ['excel_write_to_sheet', { sheetName: 'Added', newSheet: true, range: 'A1:B2', values: [['x', 1.5], [false, null]] }],
  ['excel_create_table', { sheetName: 'Sheet1', tableName: 'Fruit', range: 'A1:C5' }],
  ['excel_copy_sheet', { srcSheetName: 'Added', dstSheetName: 'Added copy' }],
  ['excel_format_range', { sheetName: 'Sheet1', range: 'A1:B1', styles: [[{ font: { bold: true } }, { fill: { type: 'pattern', pattern: 'solid', color: ['#FFFF00'] } }]] }],
  ['excel_copy_sheet', { srcSheetName: 'Sheet1', dstSheetName: 'Sheet1 copy' }],
  ['excel_describe_sheets', {}],
];

describe('xlsx file format against excel-mcp-server 0.12.0', () => {
  let directory: string;
  before(() => {
    directory = mkdtempSync(join(tmpdir(), 'xlsx-format-'));
  });
  after(() => rmSync(directory, { recursive: true, force: true }));

  it('the server reads the workbook we write', async () => {
    const file = join(directory, 'read.xlsx');
    writeFileSync(file, xlsx.encode(BOOK));
    const [described, read, formulas] = await serverCalls(file, [
      ['excel_describe_sheets', {}],
      ['excel_read_sheet', { sheetName: 'Sheet1' }],
      ['excel_read_sheet', { sheetName: 'Sheet1', range: 'A4:B4', showFormula: true }],
    ]);
    assert.equal(described!.isError, false, described!.text);
    const description = JSON.parse(described!.text);
    assert.deepEqual(description.sheets.map((sheet: { name: string; usedRange: string }) => [sheet.name, sheet.usedRange]), [['Sheet1', 'A1:C4'], ['Empty', 'A1'], ['Ünïcode ✓', 'A1:B2']]);
    assert.match(read!.text, /<tr><th>2<\/th><td>apple<\/td><td>3<\/td><td>  two spaces &amp; &lt;tags&gt; &#34;quotes&#34;<br>next line <\/td><\/tr>/);
    assert.match(read!.text, /<tr><th>3<\/th><td>pear<\/td><td>4.25<\/td><td>TRUE<\/td><\/tr>/);
    assert.match(read!.text, /<td>Total<\/td><td>7.25<\/td>/);
    assert.match(formulas!.text, /<td>=SUM\(B2:B3\)<\/td>/);
  });

  it('we read what the server writes after each kind of edit', async () => {
    const file = join(directory, 'edit.xlsx');
    writeFileSync(file, xlsx.encode(BOOK));
    const results = await serverCalls(file, EDITS);
    for (const [index, result] of results.entries()) assert.equal(result.isError, false, `${EDITS[index]![0]}: ${result.text}`);
    const decoded = xlsx.decode(readFileSync(file)) as any;
    // A copy goes right after its source.
    assert.deepEqual(decoded.sheets.map((sheet: { name: string }) => sheet.name), ['Sheet1', 'Sheet1 copy', 'Empty', 'Ünïcode ✓', 'Added', 'Added copy']);
    const sheet1 = decoded.sheets[0];
    assert.equal(sheet1.dimension, 'A1:C5');
    assert.deepEqual(sheet1.rows[0], ['Name', 'Qty', 'Note']);
    assert.deepEqual(sheet1.rows[3], ['Total', { formula: 'SUM(B2:B3)', value: 7.25 }, null]);
    // excelize stores a written formula as given, "=" and all, with no cached value.
    assert.deepEqual(sheet1.rows[4], ['kiwi', 9, { formula: '=B2*2', value: null }]);
    assert.deepEqual(decoded.sheets[1].rows, sheet1.rows);
    assert.deepEqual(decoded.sheets[4], { name: 'Added', dimension: 'A1:B2', rows: [['x', 1.5], [false, null]] });
    assert.deepEqual(decoded.sheets[5], { name: 'Added copy', dimension: 'A1:B2', rows: [['x', 1.5], [false, null]] });
    // The copy of Sheet1 links the same table part; like the server, we count the table once, on Sheet1.
    assert.deepEqual(decoded.tables, [{ sheet: 'Sheet1', name: 'Fruit', ref: 'A1:C5' }]);
    const description = JSON.parse(results[6]!.text);
    assert.deepEqual(description.sheets.map((sheet: { name: string; tables: unknown[] }) => [sheet.name, sheet.tables]), [
      ['Sheet1', [{ name: 'Fruit', range: 'A1:C5' }]], ['Sheet1 copy', []], ['Empty', []], ['Ünïcode ✓', []], ['Added', []], ['Added copy', []],
    ]);
  });

  it('the same edits on two fresh copies give byte-identical files and identical answers', async () => {
    const first = join(directory, 'first.xlsx');
    const second = join(directory, 'second', 'book.xlsx');
    writeFileSync(first, xlsx.encode(BOOK));
    // A different directory and name: the answers must not depend on where the file lies.
    mkdirSync(join(directory, 'second'));
    copyFileSync(first, second);
    const answersFirst = await serverCalls(first, EDITS);
    const answersSecond = await serverCalls(second, EDITS);
    assert.deepEqual(readFileSync(first), readFileSync(second));
    assert.deepEqual(answersFirst, answersSecond);
  });
});
