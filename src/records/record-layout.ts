// Owns laying out records a command wrote as one episodes.jsonl (dedup's
// output) in the dataset's layout, with their columnar copies: left as
// episodes.jsonl beside episodes.arrow and episodes.parquet when within the
// size bound, cut into data/train-NNNNN-of-NNNNN.* files past it. The JSONL
// is read a megabyte at a time and each copy written batch by batch, so
// laying out a dataset of any size takes the memory of one batch.

import { join } from 'node:path';
import { writeColumnar } from './columnar-files.js';
import { copyName, layOutJsonl, type RecordFormat } from './record-files.js';

/**
 * Lays out `dir`'s records (episodes.jsonl, cut past `maxFileBytes`; or JSONL
 * record files laid out already) and writes the copies in `formats`. Returns
 * the record files, relative to `dir`, JSONL first.
 */
export async function layOutRecords(dir: string, maxFileBytes: number, formats: readonly RecordFormat[] = ['jsonl', 'arrow', 'parquet']): Promise<string[]> {
  const jsonl = layOutJsonl(dir, maxFileBytes);
  const copies: string[] = [];
  for (const file of jsonl) {
    const outputs = {
      ...(formats.includes('arrow') ? { arrow: join(dir, copyName(file, 'arrow')) } : {}),
      ...(formats.includes('parquet') ? { parquet: join(dir, copyName(file, 'parquet')) } : {}),
    };
    await writeColumnar(join(dir, file), outputs);
    for (const format of ['arrow', 'parquet'] as const) if (formats.includes(format)) copies.push(copyName(file, format));
  }
  return [...jsonl, ...copies.sort()];
}
