// Owns reading --max-file-size: a number of bytes with an optional unit
// (500MB, 2GB, 64KB, 1000000; units are powers of 1,024), past which a
// command writes a dataset's records as data/train-NNNNN-of-NNNNN.* files.

import { FactoryError } from '../core/errors.js';
import { DEFAULT_MAX_FILE_BYTES } from '../records/record-files.js';

const UNITS: Record<string, number> = { '': 1, B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3 };

export const MAX_FILE_SIZE_HELP = `past this size the records are written as several files named as the Hugging Face Hub expects (data/train-00000-of-00004.jsonl, .arrow, .parquet), each within it: a number of bytes, or with KB, MB or GB (default ${DEFAULT_MAX_FILE_BYTES / 1024 ** 2}MB)`;

export function parseFileSize(flag: string, text: string | undefined): number {
  if (text === undefined) return DEFAULT_MAX_FILE_BYTES;
  const match = /^([0-9]+(?:\.[0-9]+)?)\s*(B|KB|MB|GB)?$/i.exec(text.trim());
  const bytes = match ? Math.floor(Number(match[1]) * UNITS[(match[2] ?? '').toUpperCase()]!) : NaN;
  if (!Number.isSafeInteger(bytes) || bytes < 1) throw new FactoryError('usage', `${flag} "${text}" is not a size`, { fix: `pass ${flag} 500MB (or a number of bytes, KB, MB or GB)` });
  return bytes;
}
