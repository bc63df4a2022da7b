// Owns the `xlsx` file format as a seed encoder and probe decoder name it:
// the writer and reader of Excel workbooks paired under one name.

import type { JsonValue } from '../../../core/json-value.js';
import { decodeWorkbook } from './xlsx-workbook-reader.js';
import { encodeWorkbook } from './xlsx-workbook-writer.js';

export const xlsxFormat = {
  name: 'xlsx',
  encode: (value: JsonValue): Buffer => encodeWorkbook(value),
  decode: (bytes: Buffer): JsonValue => decodeWorkbook(bytes),
} as const;
