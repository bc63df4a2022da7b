// Owns JSON Lines files: an appender that hands every line to the OS as it is
// written (so a crash leaves a readable prefix), or, for files whose writer is
// rerun after a crash anyway, all at once when it closes; and a streaming reader that
// reports corrupt lines (not UTF-8, not JSON, nested past the limit) and a torn
// last line with their line numbers instead of failing, skipping them
// silently or passing on U+FFFD in place of their bytes.

import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { JsonLimitError, MAX_RECORD_DEPTH, parseBoundedJson } from '../core/bounded-json.js';
import { firstInvalidOffset } from '../core/utf8-text.js';

export interface AppenderOptions {
  /**
   * "line" (default): every line goes to the OS as it is appended. "close":
   * lines are kept and written in one call on close, for many small files
   * whose contents are worthless after a crash (a scripted episode's trace:
   * --resume runs the episode again).
   */
  flush?: 'line' | 'close';
}

export class JsonlAppender {
  private fd: number | undefined;
  private count = 0;
  private readonly pending: string[] | undefined;

  constructor(readonly path: string, mode: 'truncate' | 'append' = 'truncate', options: AppenderOptions = {}) {
    this.fd = openSync(path, mode === 'truncate' ? 'w' : 'a');
    this.pending = options.flush === 'close' ? [] : undefined;
  }

  /** Writes one line; `serialized` lets a caller control the exact bytes. */
  append(value: unknown, serialized: string = JSON.stringify(value)): void {
    if (this.fd === undefined) throw new Error(`${this.path}: append after close`);
    if (serialized.includes('\n')) throw new Error(`${this.path}: a JSONL row must not contain a newline`);
    if (this.pending) this.pending.push(serialized);
    else writeSync(this.fd, serialized + '\n');
    this.count++;
  }

  get rows(): number {
    return this.count;
  }

  close(options: { sync?: boolean } = {}): void {
    if (this.fd === undefined) return;
    if (this.pending && this.pending.length > 0) {
      writeSync(this.fd, this.pending.join('\n') + '\n');
      this.pending.length = 0;
    }
    if (options.sync) fsyncSync(this.fd);
    closeSync(this.fd);
    this.fd = undefined;
  }
}

export interface JsonlLine {
  /** 1-based. */
  line: number;
  /** Where the line starts in the file, in bytes, and how many bytes it has (its newline not counted). */
  offset: number;
  bytes: number;
  text: string;
  /** False only for a last line with no newline: it may have been cut short. */
  terminated: boolean;
  /**
   * Set when the line's bytes are not UTF-8: the byte offset of the first bad
   * sequence within the line. `text` is then a lossy decoding (U+FFFD for the
   * bad bytes) that must not be taken for the line's content.
   */
  invalidUtf8At?: number;
  /**
   * Set, to the reader's bound (`maxLineBytes`), when the line is longer:
   * its bytes were skipped, not held, and `text` is empty.
   */
  oversized?: number;
}

/**
 * The longest line a reader holds: 64 MiB, far past any record the factory
 * writes (the largest, a long model episode, is a few hundred kilobytes), so a
 * file that is not JSON Lines at all (one huge line) cannot take the memory.
 */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;

// Keeps a byte order mark as a character, as the file holds it: JSON.parse then refuses the line.
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function decodeLine(line: number, offset: number, bytes: Buffer, terminated: boolean): JsonlLine {
  try {
    return { line, offset, bytes: bytes.byteLength, text: strictUtf8.decode(bytes), terminated };
  } catch {
    return { line, offset, bytes: bytes.byteLength, text: bytes.toString('utf8'), terminated, invalidUtf8At: firstInvalidOffset(bytes) };
  }
}

/** Bytes read from a file at a time, into one buffer the reader keeps. */
const READ_CHUNK_BYTES = 1 << 20;

/**
 * Streams the lines of a file without holding it in memory. Lines are cut on
 * the newline byte and decoded one at a time, strictly: a line that is not
 * UTF-8 says where, instead of reaching a caller with U+FFFD in place of its
 * bytes. A line longer than `maxLineBytes` is skipped to its newline and
 * comes back `oversized`, so no single line can take the memory.
 *
 * The file is read into one buffer, again and again, and a line that runs
 * past it is gathered in a second one: no buffer is allocated per chunk or
 * per line. (A new megabyte per chunk, freed at once, left the process's
 * resident memory growing by 50 MB over a 5 GB pass, in memory the allocator
 * kept and could not give back.)
 */
export async function* readLines(path: string, options: { maxLineBytes?: number; start?: number } = {}): AsyncGenerator<JsonlLine> {
  const maxLineBytes = options.maxLineBytes ?? MAX_LINE_BYTES;
  const handle = await open(path, 'r');
  try {
    const chunk = Buffer.allocUnsafe(READ_CHUNK_BYTES);
    // The start of a line that runs past the chunk: its bytes so far.
    let carry: Buffer = Buffer.allocUnsafe(0);
    let carried = 0;
    let oversized = false;
    let line = 0;
    // Where the current line starts, and where the current chunk starts, in the file.
    let lineStart = options.start ?? 0;
    let chunkStart = lineStart;
    for (;;) {
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, chunkStart);
      if (bytesRead === 0) break;
      const view = chunk.subarray(0, bytesRead);
      let start = 0;
      let newline: number;
      while ((newline = view.indexOf(0x0a, start)) >= 0) {
        const end = chunkStart + newline;
        if (oversized || carried + newline - start > maxLineBytes) {
          yield { line: ++line, offset: lineStart, bytes: end - lineStart, text: '', terminated: true, oversized: maxLineBytes };
        } else if (carried > 0) {
          carry = appended(carry, carried, view.subarray(start, newline));
          yield decodeLine(++line, lineStart, carry.subarray(0, carried + newline - start), true);
        } else {
          yield decodeLine(++line, lineStart, view.subarray(start, newline), true);
        }
        carried = 0;
        oversized = false;
        start = newline + 1;
        lineStart = end + 1;
      }
      if (start < view.length && !oversized) {
        if (carried + view.length - start > maxLineBytes) {
          oversized = true;
          carried = 0;
        } else {
          carry = appended(carry, carried, view.subarray(start));
          carried += view.length - start;
        }
      }
      chunkStart += bytesRead;
    }
    if (oversized) yield { line: ++line, offset: lineStart, bytes: chunkStart - lineStart, text: '', terminated: false, oversized: maxLineBytes };
    else if (carried > 0) yield decodeLine(++line, lineStart, carry.subarray(0, carried), false);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** `carry` with `bytes` written after its first `used` bytes: the same buffer when they fit, else one twice as large. */
function appended(carry: Buffer, used: number, bytes: Buffer): Buffer {
  let target = carry;
  if (used + bytes.length > carry.length) {
    target = Buffer.allocUnsafe(Math.max(used + bytes.length, carry.length * 2, 64 * 1024));
    carry.copy(target, 0, 0, used);
  }
  bytes.copy(target, used);
  return target;
}

/** Why a line cannot be a JSON value: torn, blank or not UTF-8; undefined when it may be parsed. */
export function lineProblem(entry: JsonlLine): string | undefined {
  if (entry.oversized !== undefined) return `a line of ${entry.bytes} bytes, longer than the ${entry.oversized} bytes a line may have: not a record file, or a corrupt one`;
  if (!entry.terminated) return 'torn last line (no newline: the writer was interrupted)';
  if (entry.invalidUtf8At !== undefined) return `not UTF-8 (invalid byte sequence at byte ${entry.invalidUtf8At} of the line)`;
  if (entry.text.trim() === '') return 'blank line';
  return undefined;
}

/** The reason a line that is UTF-8 text did not parse: past the nesting limit, or not JSON. */
export function jsonLineProblem(error: unknown): string {
  return error instanceof JsonLimitError ? error.message : `not valid JSON (${(error as Error).message})`;
}

export interface JsonlProblem {
  line: number;
  reason: string;
}

export interface JsonlRow<T> {
  line: number;
  value: T;
  /** The exact bytes of the line, for byte-level comparisons. */
  text: string;
}

/**
 * Parses every line. Blank lines, lines that are not UTF-8, unparseable or
 * too deep lines and a torn last line are returned as problems; the rows before and after them are still returned.
 */
export async function readJsonl<T = unknown>(path: string, options: { maxDepth?: number } = {}): Promise<{ rows: JsonlRow<T>[]; problems: JsonlProblem[] }> {
  const rows: JsonlRow<T>[] = [];
  const problems: JsonlProblem[] = [];
  for await (const entry of readLines(path)) {
    const problem = lineProblem(entry);
    if (problem !== undefined) {
      problems.push({ line: entry.line, reason: problem });
      continue;
    }
    try {
      rows.push({ line: entry.line, value: parseBoundedJson(entry.text, { maxDepth: options.maxDepth ?? MAX_RECORD_DEPTH, where: 'the line' }) as T, text: entry.text });
    } catch (error) {
      problems.push({ line: entry.line, reason: jsonLineProblem(error) });
    }
  }
  return { rows, problems };
}
