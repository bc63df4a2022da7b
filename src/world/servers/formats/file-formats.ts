// Owns the binary file formats a server world's definition can name: an
// encoder turns a JSON description into a file's bytes for the seed
// generator, a decoder reads a file's bytes back into JSON for the probe.
// Each must be deterministic: the same value gives the same bytes. This file
// is the one list of formats: each is imported here and registered below.

import { FactoryError } from '../../../core/errors.js';
import type { JsonValue } from '../../../core/json-value.js';
import { xlsxFormat } from './xlsx-workbook.js';

export interface FileFormat {
  /** Same value, same bytes, always (no clock, no randomness). */
  encode(value: JsonValue): Buffer;
  /** The file's logical content as JSON; throws on bytes it cannot read. */
  decode(bytes: Buffer): JsonValue;
}

/** Every format a definition may name, by its name (`"encoder": "xlsx"`, `"decoder": "xlsx"`, parsers `"*.xlsx": "xlsx"`). */
const REGISTERED: ReadonlyArray<FileFormat & { readonly name: string }> = [xlsxFormat];

const formats = new Map<string, FileFormat>(REGISTERED.map((format) => [format.name, format]));

export function fileFormatNames(): string[] {
  return [...formats.keys()].sort();
}

export function fileFormat(name: string): FileFormat {
  const format = formats.get(name);
  if (!format) throw new FactoryError('definition_invalid', `no file format named "${name}"`, { fix: `use one of: ${fileFormatNames().join(', ') || '(none)'}` });
  return format;
}
