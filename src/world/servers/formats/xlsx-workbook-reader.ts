// Owns reading `.xlsx` bytes back into the workbook's logical content as JSON:
// sheets in workbook order, each with its dimension and its rows dense from A1
// (empty cells null), values resolved (shared and inline strings, numbers,
// booleans, formulas with their cached results), and the tables defined on
// sheets. Styles are ignored: the snapshot compares what cells hold.

import { posix } from 'node:path';
import { FactoryError } from '../../../core/errors.js';
import type { JsonObject, JsonValue } from '../../../core/json-value.js';
import { cellName, parseCellName, parseRange, type CellPosition } from './cell-reference.js';
import { attributeOf, childElements, firstChild, ownText, parseXml, type XmlElement } from './xml-document.js';
import { readZip } from './zip-archive.js';

/** A sheet this large read densely would dwarf the file; the probe refuses instead. */
const MAX_DENSE_CELLS = 1_000_000;

function unreadable(message: string): FactoryError {
  return new FactoryError('server_failed', `xlsx: ${message}`, { fix: 'the workbook is missing a part or holds one this reader does not understand; check what wrote it' });
}

class Package {
  private readonly parts = new Map<string, Buffer>();

  constructor(bytes: Buffer) {
    for (const entry of readZip(bytes)) this.parts.set(entry.name, entry.data);
  }

  has(name: string): boolean {
    return this.parts.has(name);
  }

  xml(name: string): XmlElement {
    const data = this.parts.get(name);
    if (!data) throw unreadable(`part ${name} is missing`);
    return parseXml(data.toString('utf8'), name);
  }

  names(): string[] {
    return [...this.parts.keys()];
  }

  /** The relationships of part `name` (from its `_rels/NAME.rels`), targets resolved to part names. */
  relationships(name: string): Array<{ id: string; type: string; target: string }> {
    const directory = posix.dirname(name);
    const relsName = posix.join(directory, '_rels', `${posix.basename(name)}.rels`).replace(/^\.\//, '');
    if (!this.parts.has(relsName)) return [];
    return childElements(this.xml(relsName), 'Relationship')
      .filter((relationship) => attributeOf(relationship, 'TargetMode') !== 'External')
      .map((relationship) => {
        const target = attributeOf(relationship, 'Target') ?? '';
        const resolved = target.startsWith('/') ? target.slice(1) : posix.normalize(posix.join(directory, target));
        return { id: attributeOf(relationship, 'Id') ?? '', type: (attributeOf(relationship, 'Type') ?? '').replace(/^.*\//, ''), target: resolved };
      });
  }
}

/** The text of a shared-string item or inline string: its `<t>` and its rich-text runs' `<t>`, phonetic runs left out. */
function stringItemText(item: XmlElement): string {
  let text = '';
  for (const child of childElements(item)) {
    if (child.local === 't') text += ownText(child);
    else if (child.local === 'r') for (const t of childElements(child, 't')) text += ownText(t);
  }
  return text;
}

function numberValue(text: string, where: string): number {
  const value = Number(text.trim());
  if (text.trim() === '' || !Number.isFinite(value)) throw unreadable(`${where} holds ${JSON.stringify(text)}, not a number`);
  return value;
}

/** The value of cell `cell`: a scalar, `{"formula", "value"}`, or `{"error"}` for an error result. */
function cellValue(cell: XmlElement, strings: string[], where: string): JsonValue {
  const type = attributeOf(cell, 't') ?? 'n';
  const v = firstChild(cell, 'v');
  const raw = v ? ownText(v) : undefined;
  let value: JsonValue;
  if (type === 'inlineStr') {
    const inline = firstChild(cell, 'is');
    value = inline ? stringItemText(inline) : raw ?? null;
  } else if (raw === undefined) {
    value = null;
  } else if (type === 's') {
    const index = numberValue(raw, where);
    if (!Number.isInteger(index) || index < 0 || index >= strings.length) throw unreadable(`${where} names shared string ${raw}, which does not exist`);
    value = strings[index]!;
  } else if (type === 'b') {
    value = raw.trim() === '1' || raw.trim() === 'true';
  } else if (type === 'e') {
    value = { error: raw };
  } else if (type === 'str' || type === 'd') {
    value = raw;
  } else {
    value = numberValue(raw, where);
  }
  const formula = firstChild(cell, 'f');
  if (!formula) return value;
  const text = ownText(formula);
  if (attributeOf(formula, 't') === 'shared' && text === '') {
    // A follower of a shared formula: its text is the master's with references shifted, which this reader does not compute.
    return { shared_formula: attributeOf(formula, 'si') ?? '', value };
  }
  return { formula: text, value };
}

interface SheetContent {
  dimension: string;
  rows: JsonValue[][];
}

function readSheet(sheet: XmlElement, strings: string[], partName: string): SheetContent {
  const cells = new Map<string, JsonValue>();
  let maxColumn = -1;
  let maxRow = -1;
  const data = firstChild(sheet, 'sheetData');
  let nextRow = 0;
  for (const row of data ? childElements(data, 'row') : []) {
    const rowAttribute = attributeOf(row, 'r');
    const rowIndex = rowAttribute === undefined ? nextRow : Number(rowAttribute) - 1;
    if (!Number.isInteger(rowIndex) || rowIndex < 0) throw unreadable(`${partName}: row number ${JSON.stringify(rowAttribute)} is not one`);
    nextRow = rowIndex + 1;
    let nextColumn = 0;
    for (const cell of childElements(row, 'c')) {
      const reference = attributeOf(cell, 'r');
      let position: CellPosition | undefined = { column: nextColumn, row: rowIndex };
      if (reference !== undefined) {
        position = parseCellName(reference);
        if (!position || position.row !== rowIndex) throw unreadable(`${partName}: cell reference ${JSON.stringify(reference)} is not a cell of row ${rowIndex + 1}`);
      }
      nextColumn = position.column + 1;
      const value = cellValue(cell, strings, `${partName} cell ${cellName(position)}`);
      if (value === null) continue;
      cells.set(`${position.row}:${position.column}`, value);
      maxColumn = Math.max(maxColumn, position.column);
      maxRow = Math.max(maxRow, position.row);
    }
  }
  const dimensionElement = firstChild(sheet, 'dimension');
  const written = dimensionElement ? attributeOf(dimensionElement, 'ref') : undefined;
  const range = written === undefined ? undefined : parseRange(written);
  if (cells.size === 0) return { dimension: written ?? 'A1', rows: [] };
  // The rows reach the dimension's end, and past it if a cell lies outside (a stale dimension must not hide a value).
  const lastColumn = Math.max(maxColumn, range?.end.column ?? 0);
  const lastRow = Math.max(maxRow, range?.end.row ?? 0);
  if ((lastColumn + 1) * (lastRow + 1) > MAX_DENSE_CELLS) throw unreadable(`${partName} spans ${cellName({ column: lastColumn, row: lastRow })}, over ${MAX_DENSE_CELLS} cells read densely`);
  const rows: JsonValue[][] = [];
  for (let row = 0; row <= lastRow; row++) {
    const values: JsonValue[] = [];
    for (let column = 0; column <= lastColumn; column++) values.push(cells.get(`${row}:${column}`) ?? null);
    rows.push(values);
  }
  return { dimension: written ?? `A1:${cellName({ column: lastColumn, row: lastRow })}`, rows };
}

/**
 * The logical content of the `.xlsx` `bytes`:
 * `{"sheets": [{"name", "dimension", "rows"}], "tables"?: [{"sheet", "name", "ref"}]}`.
 */
export function decodeWorkbook(bytes: Buffer): JsonValue {
  const book = new Package(bytes);
  const office = book.relationships('').find((relationship) => relationship.type === 'officeDocument');
  const workbookName = office?.target ?? 'xl/workbook.xml';
  const workbook = book.xml(workbookName);
  const workbookRelationships = book.relationships(workbookName);
  const byId = new Map(workbookRelationships.map((relationship) => [relationship.id, relationship]));

  const sharedName = workbookRelationships.find((relationship) => relationship.type === 'sharedStrings')?.target
    ?? (book.has('xl/sharedStrings.xml') ? 'xl/sharedStrings.xml' : undefined);
  const strings = sharedName && book.has(sharedName) ? childElements(book.xml(sharedName), 'si').map(stringItemText) : [];

  const sheetsElement = firstChild(workbook, 'sheets');
  const sheets: JsonObject[] = [];
  const tables: JsonObject[] = [];
  const claimedTables = new Set<string>();
  for (const sheet of sheetsElement ? childElements(sheetsElement, 'sheet') : []) {
    const name = attributeOf(sheet, 'name') ?? '';
    const id = attributeOf(sheet, 'id') ?? '';
    const relationship = byId.get(id);
    if (!relationship) throw unreadable(`${workbookName}: sheet "${name}" names relationship ${JSON.stringify(id)}, which ${workbookName}'s relationships do not hold`);
    if (relationship.type !== 'worksheet') continue; // chart sheets and dialog sheets hold no cells
    const content = readSheet(book.xml(relationship.target), strings, relationship.target);
    sheets.push({ name, dimension: content.dimension, rows: content.rows });
    for (const part of book.relationships(relationship.target)) {
      // excelize's copy_sheet copies a sheet's relationships, so the copy names the same table part; a table
      // belongs to one sheet, the first to name it, as excelize's own describe_sheets reports it.
      if (part.type !== 'table' || !book.has(part.target) || claimedTables.has(part.target)) continue;
      claimedTables.add(part.target);
      const table = book.xml(part.target);
      tables.push({ sheet: name, name: attributeOf(table, 'displayName') ?? attributeOf(table, 'name') ?? '', ref: attributeOf(table, 'ref') ?? '' });
    }
  }
  if (sheets.length === 0) throw unreadable(`${workbookName} lists no worksheet`);
  // Within a sheet, tables by name: relationship ids are the writer's, not the content's.
  tables.sort((a, b) => sheets.findIndex((sheet) => sheet.name === a.sheet) - sheets.findIndex((sheet) => sheet.name === b.sheet) || String(a.name).localeCompare(String(b.name), 'en'));
  return tables.length > 0 ? { sheets, tables } : { sheets };
}
