// Owns spreadsheet cell references: the A1 names of cells and ranges turned
// into zero-based column and row numbers and back.

export interface CellPosition {
  /** Zero-based. */
  column: number;
  /** Zero-based. */
  row: number;
}

/** Excel's last column (XFD) and row. */
export const MAX_COLUMNS = 16_384;
export const MAX_ROWS = 1_048_576;

export function columnName(column: number): string {
  let name = '';
  for (let n = column + 1; n > 0; n = Math.floor((n - 1) / 26)) name = String.fromCharCode(65 + ((n - 1) % 26)) + name;
  return name;
}

export function cellName(position: CellPosition): string {
  return `${columnName(position.column)}${position.row + 1}`;
}

/** The position `reference` names (`B3`, `$B$3`), or undefined when it is not a cell reference within Excel's grid. */
export function parseCellName(reference: string): CellPosition | undefined {
  const match = /^\$?([A-Za-z]{1,3})\$?([1-9][0-9]{0,6})$/.exec(reference);
  if (!match) return undefined;
  let column = 0;
  for (const letter of match[1]!.toUpperCase()) column = column * 26 + (letter.charCodeAt(0) - 64);
  const row = Number(match[2]);
  if (column > MAX_COLUMNS || row > MAX_ROWS) return undefined;
  return { column: column - 1, row: row - 1 };
}

/** The corners of `range` (`A1:C3`, or one cell `B2`), or undefined when it is not one. */
export function parseRange(range: string): { start: CellPosition; end: CellPosition } | undefined {
  const [first, second, ...rest] = range.split(':');
  if (rest.length > 0 || first === undefined) return undefined;
  const start = parseCellName(first);
  const end = second === undefined ? start : parseCellName(second);
  if (!start || !end) return undefined;
  return {
    start: { column: Math.min(start.column, end.column), row: Math.min(start.row, end.row) },
    end: { column: Math.max(start.column, end.column), row: Math.max(start.row, end.row) },
  };
}
