// Owns writing a workbook described as JSON into `.xlsx` bytes: the smallest
// set of parts Excel and excelize (the Go library excel-mcp-server uses) open
// and write back, each sheet with the `<dimension>` excelize needs to write
// and a `styles.xml` its formatting needs, strings in a shared-strings table in
// the order they first appear. Nothing but the value reaches the bytes.

import { FactoryError } from '../../../core/errors.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../../../core/json-value.js';
import { cellName, columnName, MAX_COLUMNS, MAX_ROWS } from './cell-reference.js';
import { escapeXmlAttribute, escapeXmlText, isXmlSafe } from './xml-document.js';
import { writeZip, type ZipEntry } from './zip-archive.js';

const MAIN_NAMESPACE = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const RELATIONSHIP_NAMESPACE = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const PACKAGE_RELATIONSHIPS = 'http://schemas.openxmlformats.org/package/2006/relationships';
const RELATIONSHIP_TYPE = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const CONTENT_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml';
const DECLARATION = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';

const STYLES = `${DECLARATION}<styleSheet xmlns="${MAIN_NAMESPACE}">`
  + '<fonts count="1"><font><sz val="11"/><color theme="1"/><name val="Calibri"/><family val="2"/><scheme val="minor"/></font></fonts>'
  + '<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>'
  + '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>'
  + '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>'
  + '<cellXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/></cellXfs>'
  + '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>'
  + '<dxfs count="0"/><tableStyles count="0" defaultTableStyle="TableStyleMedium2" defaultPivotStyle="PivotStyleLight16"/>'
  + '</styleSheet>';

function invalid(pointer: string, message: string, fix: string): FactoryError {
  return new FactoryError('definition_invalid', `xlsx value ${pointer}: ${message}`, { fix });
}

function checkText(text: string, pointer: string): string {
  if (!isXmlSafe(text)) throw invalid(pointer, 'holds a control character a workbook cannot store', 'remove control characters other than tab and line ends');
  if (text.length > 32_767) throw invalid(pointer, `is ${text.length} characters, over Excel's 32,767 per cell`, 'shorten the text');
  return text;
}

/** Shared strings in the order they first appear, so the same rows give the same table. */
class SharedStrings {
  readonly list: string[] = [];
  uses = 0;
  private readonly index = new Map<string, number>();

  add(text: string): number {
    this.uses++;
    let at = this.index.get(text);
    if (at === undefined) {
      at = this.list.length;
      this.list.push(text);
      this.index.set(text, at);
    }
    return at;
  }
}

function textElement(text: string): string {
  const preserve = /^\s|\s$|\n/.test(text) ? ' xml:space="preserve"' : '';
  return `<t${preserve}>${escapeXmlText(text)}</t>`;
}

function numberText(value: number, pointer: string): string {
  if (!Number.isFinite(value)) throw invalid(pointer, `${value} is not a finite number`, 'write a finite number');
  return String(value);
}

/** One `<c>` element, or '' for an empty cell. */
function cellXml(cell: JsonValue, reference: string, strings: SharedStrings, pointer: string): string {
  if (cell === null) return '';
  if (typeof cell === 'string') return `<c r="${reference}" t="s"><v>${strings.add(checkText(cell, pointer))}</v></c>`;
  if (typeof cell === 'number') return `<c r="${reference}"><v>${numberText(cell, pointer)}</v></c>`;
  if (typeof cell === 'boolean') return `<c r="${reference}" t="b"><v>${cell ? 1 : 0}</v></c>`;
  if (isJsonObject(cell) && typeof cell.formula === 'string') {
    const unknown = Object.keys(cell).filter((key) => key !== 'formula' && key !== 'value');
    if (unknown.length > 0) throw invalid(pointer, `has unknown field "${unknown[0]}"`, 'a formula cell has only "formula" and optionally "value"');
    const formula = `<f>${escapeXmlText(checkText(cell.formula.replace(/^=/, ''), `${pointer}/formula`))}</f>`;
    const value = cell.value;
    if (value === undefined || value === null) return `<c r="${reference}">${formula}</c>`;
    if (typeof value === 'number') return `<c r="${reference}">${formula}<v>${numberText(value, `${pointer}/value`)}</v></c>`;
    if (typeof value === 'boolean') return `<c r="${reference}" t="b">${formula}<v>${value ? 1 : 0}</v></c>`;
    if (typeof value === 'string') return `<c r="${reference}" t="str">${formula}<v>${escapeXmlText(checkText(value, `${pointer}/value`))}</v></c>`;
    throw invalid(`${pointer}/value`, 'is not a string, number, boolean or null', 'give the formula\'s cached result as a scalar');
  }
  throw invalid(pointer, 'is not a string, number, boolean, null or {"formula": …}', 'write each cell as a scalar or {"formula": "SUM(A1:A3)", "value": 6}');
}

interface SheetValue {
  name: string;
  rows: JsonValue[][];
  columns: Array<number | null>;
}

const SHEET_NAME_FORBIDDEN = /[\][:*?/\\]/;

function readSheets(value: JsonValue): SheetValue[] {
  if (!isJsonObject(value) || !Array.isArray(value.sheets)) throw invalid('', 'is not {"sheets": [...]}', 'write {"sheets": [{"name": "Sheet1", "rows": [["a", 1]]}]}');
  const unknown = Object.keys(value).filter((key) => key !== 'sheets');
  if (unknown.length > 0) throw invalid(`/${unknown[0]}`, 'is not a field of a workbook', 'a workbook has only "sheets"');
  if (value.sheets.length === 0) throw invalid('/sheets', 'is empty', 'a workbook needs at least one sheet');
  const names = new Set<string>();
  return value.sheets.map((sheet, index) => {
    const pointer = `/sheets/${index}`;
    if (!isJsonObject(sheet)) throw invalid(pointer, 'is not an object', 'write {"name": "Sheet1", "rows": [...]}');
    const extra = Object.keys(sheet).filter((key) => !['name', 'rows', 'columns'].includes(key));
    if (extra.length > 0) throw invalid(`${pointer}/${extra[0]}`, 'is not a field of a sheet', 'a sheet has "name", "rows" and optionally "columns"');
    const { name } = sheet as JsonObject;
    if (typeof name !== 'string' || name.length === 0 || name.length > 31 || SHEET_NAME_FORBIDDEN.test(name) || name.startsWith("'") || name.endsWith("'") || !isXmlSafe(name)) {
      throw invalid(`${pointer}/name`, `${JSON.stringify(name)} is not a sheet name`, 'a sheet name is 1 to 31 characters without : \\ / ? * [ ] and not starting or ending with \'');
    }
    if (names.has(name.toLowerCase())) throw invalid(`${pointer}/name`, `"${name}" names a sheet twice (Excel ignores case)`, 'give each sheet a distinct name');
    names.add(name.toLowerCase());
    const rows = sheet.rows ?? [];
    if (!Array.isArray(rows) || !rows.every(Array.isArray)) throw invalid(`${pointer}/rows`, 'is not a list of rows (lists of cells)', 'write [["Name", "Qty"], ["apple", 3]]');
    if (rows.length > MAX_ROWS) throw invalid(`${pointer}/rows`, `has ${rows.length} rows, over Excel's ${MAX_ROWS}`, 'write fewer rows');
    rows.forEach((row, at) => {
      if ((row as JsonValue[]).length > MAX_COLUMNS) throw invalid(`${pointer}/rows/${at}`, `has ${(row as JsonValue[]).length} cells, over Excel's ${MAX_COLUMNS}`, 'write fewer columns');
    });
    const columns = sheet.columns ?? [];
    if (!Array.isArray(columns) || !columns.every((width) => width === null || (typeof width === 'number' && width > 0 && width <= 255))) {
      throw invalid(`${pointer}/columns`, 'is not a list of column widths (numbers from 0 to 255, or null)', 'write "columns": [20, null, 12]');
    }
    return { name, rows: rows as JsonValue[][], columns: columns as Array<number | null> };
  });
}

function sheetXml(sheet: SheetValue, index: number, strings: SharedStrings): string {
  const width = Math.max(0, ...sheet.rows.map((row) => row.length));
  const height = sheet.rows.length;
  const dimension = width === 0 || height === 0 ? 'A1' : width === 1 && height === 1 ? 'A1' : `A1:${cellName({ column: width - 1, row: height - 1 })}`;
  const rows: string[] = [];
  sheet.rows.forEach((row, rowIndex) => {
    const cells = row.map((cell, column) => cellXml(cell, `${columnName(column)}${rowIndex + 1}`, strings, `/sheets/${index}/rows/${rowIndex}/${column}`)).join('');
    if (cells !== '') rows.push(`<row r="${rowIndex + 1}">${cells}</row>`);
  });
  const columns = sheet.columns
    .map((columnWidth, column) => (columnWidth === null ? '' : `<col min="${column + 1}" max="${column + 1}" width="${columnWidth}" customWidth="1"/>`))
    .join('');
  const selected = index === 0 ? ' tabSelected="1"' : '';
  return `${DECLARATION}<worksheet xmlns="${MAIN_NAMESPACE}" xmlns:r="${RELATIONSHIP_NAMESPACE}">`
    + `<dimension ref="${dimension}"/>`
    + `<sheetViews><sheetView${selected} workbookViewId="0"/></sheetViews>`
    + '<sheetFormatPr defaultRowHeight="15"/>'
    + (columns === '' ? '' : `<cols>${columns}</cols>`)
    + (rows.length === 0 ? '<sheetData/>' : `<sheetData>${rows.join('')}</sheetData>`)
    + '<pageMargins left="0.7" right="0.7" top="0.75" bottom="0.75" header="0.3" footer="0.3"/>'
    + '</worksheet>';
}

function relationships(items: Array<[id: string, type: string, target: string]>): string {
  const body = items.map(([id, type, target]) => `<Relationship Id="${id}" Type="${RELATIONSHIP_TYPE}/${type}" Target="${escapeXmlAttribute(target)}"/>`).join('');
  return `${DECLARATION}<Relationships xmlns="${PACKAGE_RELATIONSHIPS}">${body}</Relationships>`;
}

/** The `.xlsx` bytes of `value` (`{"sheets": [{"name", "rows", "columns"?}]}`); the same value always gives the same bytes. */
export function encodeWorkbook(value: JsonValue): Buffer {
  const sheets = readSheets(value);
  const strings = new SharedStrings();
  const sheetParts = sheets.map((sheet, index) => sheetXml(sheet, index, strings));
  const hasStrings = strings.list.length > 0;

  const overrides = [
    ['/xl/workbook.xml', `${CONTENT_TYPE}.sheet.main+xml`],
    ...sheets.map((_, index) => [`/xl/worksheets/sheet${index + 1}.xml`, `${CONTENT_TYPE}.worksheet+xml`]),
    ['/xl/styles.xml', `${CONTENT_TYPE}.styles+xml`],
    ...(hasStrings ? [['/xl/sharedStrings.xml', `${CONTENT_TYPE}.sharedStrings+xml`]] : []),
  ];
  const contentTypes = `${DECLARATION}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">`
    + '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    + '<Default Extension="xml" ContentType="application/xml"/>'
    + overrides.map(([part, type]) => `<Override PartName="${part}" ContentType="${type}"/>`).join('')
    + '</Types>';

  const workbook = `${DECLARATION}<workbook xmlns="${MAIN_NAMESPACE}" xmlns:r="${RELATIONSHIP_NAMESPACE}">`
    + '<bookViews><workbookView/></bookViews><sheets>'
    + sheets.map((sheet, index) => `<sheet name="${escapeXmlAttribute(sheet.name)}" sheetId="${index + 1}" r:id="rId${index + 1}"/>`).join('')
    + '</sheets></workbook>';
  const workbookRelationships = relationships([
    ...sheets.map((_, index): [string, string, string] => [`rId${index + 1}`, 'worksheet', `worksheets/sheet${index + 1}.xml`]),
    [`rId${sheets.length + 1}`, 'styles', 'styles.xml'],
    ...(hasStrings ? [[`rId${sheets.length + 2}`, 'sharedStrings', 'sharedStrings.xml'] as [string, string, string]] : []),
  ]);

  const entries: ZipEntry[] = [
    { name: '[Content_Types].xml', data: Buffer.from(contentTypes, 'utf8') },
    { name: '_rels/.rels', data: Buffer.from(relationships([['rId1', 'officeDocument', 'xl/workbook.xml']]), 'utf8') },
    { name: 'xl/workbook.xml', data: Buffer.from(workbook, 'utf8') },
    { name: 'xl/_rels/workbook.xml.rels', data: Buffer.from(workbookRelationships, 'utf8') },
    { name: 'xl/styles.xml', data: Buffer.from(STYLES, 'utf8') },
    ...sheetParts.map((xml, index) => ({ name: `xl/worksheets/sheet${index + 1}.xml`, data: Buffer.from(xml, 'utf8') })),
  ];
  if (hasStrings) {
    const items = strings.list.map((text) => `<si>${textElement(text)}</si>`).join('');
    const shared = `${DECLARATION}<sst xmlns="${MAIN_NAMESPACE}" count="${strings.uses}" uniqueCount="${strings.list.length}">${items}</sst>`;
    entries.push({ name: 'xl/sharedStrings.xml', data: Buffer.from(shared, 'utf8') });
  }
  // Stored, not deflated: zlib's output may change between Node releases; stored bytes cannot.
  return writeZip(entries, 'store');
}
