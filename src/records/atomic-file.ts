// Owns finishing a file atomically: write it under a temporary name, fsync it,
// rename it into place and fsync the directory, so that after a crash (even
// SIGKILL or a power cut) the file is either absent or whole, never torn.

import { closeSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** The suffix of a file being written; one left behind by a crash is garbage to delete. */
export const TEMPORARY_SUFFIX = '.tmp';

/** Where a file is written before it is moved into place: hidden, beside it, so the rename stays on one file system. */
export function temporaryPathFor(path: string): string {
  return join(dirname(path), `.${basename(path)}${TEMPORARY_SUFFIX}`);
}

/** Moves a finished (already fsynced) temporary file into place durably. */
export function moveIntoPlace(temporary: string, path: string): void {
  renameSync(temporary, path);
  syncDirectory(dirname(path));
}

/** Writes `chunks` (any iterable: a generator keeps a big file out of memory) to a temporary file, flushed, then moved into place. */
export function writeFileAtomically(path: string, chunks: Iterable<string | Uint8Array> | string): void {
  const temporary = temporaryPathFor(path);
  const fd = openSync(temporary, 'w');
  try {
    for (const chunk of typeof chunks === 'string' ? [chunks] : chunks) writeAll(fd, typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  moveIntoPlace(temporary, path);
}

function writeAll(fd: number, bytes: Uint8Array): void {
  let offset = 0;
  while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
}

/** Makes a rename in the directory durable. */
export function syncDirectory(directory: string): void {
  const fd = openSync(directory, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
