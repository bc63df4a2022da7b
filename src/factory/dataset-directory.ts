// Owns the layout of a generated dataset directory and how a finished run
// lands in it: the file names, the check that --out is a dataset (or empty)
// before anything is replaced, assembling files in a staging directory, and
// publishing them over the previous dataset's files.

import { closeSync, existsSync, fsyncSync, openSync, readdirSync, readSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { FactoryError } from '../core/errors.js';
import { ARROW_FILE, PARQUET_FILE } from '../records/columnar-names.js';
import { MANIFEST_FILE } from '../records/manifest.js';

export const EPISODES_FILE = 'episodes.jsonl';
export const REJECTED_FILE = 'rejected.jsonl';
export const TRACES_DIR = 'traces';
export const STAGING_DIR = '.partial';

/**
 * Publishing replaces `traces/` and the dataset files, so the output directory
 * must be new, empty, or an earlier dataset: never a directory of other things.
 */
export function assertDatasetDirectory(outDir: string): void {
  if (!existsSync(outDir)) return;
  if (!statSync(outDir).isDirectory()) {
    throw new FactoryError('usage', `--out ${outDir} is a file`, { fix: 'choose a directory path for --out' });
  }
  const entries = readdirSync(outDir);
  const known = new Set([EPISODES_FILE, REJECTED_FILE, ARROW_FILE, PARQUET_FILE, TRACES_DIR, MANIFEST_FILE, STAGING_DIR]);
  if (entries.length > 0 && !entries.some((entry) => entry === EPISODES_FILE || entry === MANIFEST_FILE || entry === STAGING_DIR)) {
    const strangers = entries.filter((entry) => !known.has(entry)).slice(0, 3);
    throw new FactoryError('usage', `--out ${outDir} is not empty and holds no dataset (it has ${strangers.join(', ')}${entries.length > 3 ? ', …' : ''})`, {
      fix: 'choose a new or empty directory; generate replaces traces/ and the dataset files in it',
    });
  }
}

/** Moves a finished run from staging into place, replacing the previous dataset's files. */
export function publish(staging: string, outDir: string): void {
  rmSync(join(outDir, MANIFEST_FILE), { force: true });
  for (const file of [EPISODES_FILE, REJECTED_FILE, ARROW_FILE, PARQUET_FILE]) {
    // A format this run did not write must not survive from an earlier run.
    if (existsSync(join(staging, file))) renameSync(join(staging, file), join(outDir, file));
    else rmSync(join(outDir, file), { force: true });
  }
  rmSync(join(outDir, TRACES_DIR), { recursive: true, force: true });
  renameSync(join(staging, TRACES_DIR), join(outDir, TRACES_DIR));
  rmSync(staging, { recursive: true, force: true });
}

/** Appends files, in order, into one, a megabyte at a time, flushed to disk before it is published. */
export function concatenateFiles(sources: readonly string[], target: string): void {
  const buffer = Buffer.allocUnsafe(1 << 20);
  const fd = openSync(target, 'w');
  try {
    for (const source of sources) {
      const input = openSync(source, 'r');
      try {
        let read: number;
        while ((read = readSync(input, buffer, 0, buffer.length, null)) > 0) {
          let offset = 0;
          while (offset < read) offset += writeSync(fd, buffer, offset, read - offset);
        }
      } finally {
        closeSync(input);
      }
    }
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
