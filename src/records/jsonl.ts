// Owns JSON Lines files: an appender that hands every line to the OS as it is
// written (so a crash leaves a readable prefix), or, for files whose writer is
// rerun after a crash anyway, all at once when it closes; and a streaming reader that
// reports corrupt lines (not UTF-8, not JSON, nested past the limit) and a torn
// last line with their line numbers instead of failing, skipping them
// silently or passing on U+FFFD in place of their bytes.

import { closeSync, createReadStream, fsyncSync, openSync, writeSync } from 'node:fs';
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
  text: string;
  /** False only for a last line with no newline: it may have been cut short. */
  terminated: boolean;
  /**
   * Set when the line's bytes are not UTF-8: the byte offset of the first bad
   * sequence within the line. `text` is then a lossy decoding (U+FFFD for the
   * bad bytes) that must not be taken for the line's content.
   */
  invalidUtf8At?: number;
}

// Keeps a byte order mark as a character, as the file holds it: JSON.parse then refuses the line.
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function decodeLine(line: number, bytes: Buffer, terminated: boolean): JsonlLine {
  try {
    return { line, text: strictUtf8.decode(bytes), terminated };
  } catch {
    return { line, text: bytes.toString('utf8'), terminated, invalidUtf8At: firstInvalidOffset(bytes) };
  }
}

/**
 * Streams the lines of a file without holding it in memory. Lines are cut on
 * the newline byte and decoded one at a time, strictly: a line that is not
 * UTF-8 says where, instead of reaching a caller with U+FFFD in place of its
 * bytes.
 */
export async function* readLines(path: string): AsyncGenerator<JsonlLine> {
  let pending: Buffer[] = [];
  let line = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    let start = 0;
    let newline: number;
    while ((newline = chunk.indexOf(0x0a, start)) >= 0) {
      const piece = chunk.subarray(start, newline);
      const bytes = pending.length > 0 ? Buffer.concat([...pending, piece]) : piece;
      pending = [];
      yield decodeLine(++line, bytes, true);
      start = newline + 1;
    }
    if (start < chunk.length) pending.push(chunk.subarray(start));
  }
  if (pending.length > 0) yield decodeLine(++line, Buffer.concat(pending), false);
}

/** Why a line cannot be a JSON value: torn, blank or not UTF-8; undefined when it may be parsed. */
export function lineProblem(entry: JsonlLine): string | undefined {
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
