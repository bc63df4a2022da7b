// Owns JSON Lines files: an appender that hands every line to the OS as it is
// written (so a crash leaves a readable prefix), or, for files whose writer is
// rerun after a crash anyway, all at once when it closes; and a streaming reader that
// reports corrupt lines and a torn last line with their line numbers instead
// of failing or skipping them silently.

import { closeSync, createReadStream, fsyncSync, openSync, writeSync } from 'node:fs';

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
}

/** Streams the lines of a file without holding it in memory. */
export async function* readLines(path: string): AsyncGenerator<JsonlLine> {
  let pending = '';
  let line = 0;
  for await (const chunk of createReadStream(path, { encoding: 'utf8', highWaterMark: 1 << 20 })) {
    pending += chunk as string;
    let newline: number;
    while ((newline = pending.indexOf('\n')) >= 0) {
      yield { line: ++line, text: pending.slice(0, newline), terminated: true };
      pending = pending.slice(newline + 1);
    }
  }
  if (pending.length > 0) yield { line: ++line, text: pending, terminated: false };
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
 * Parses every line. Blank lines, unparseable lines and a torn last line are
 * returned as problems; the rows before and after them are still returned.
 */
export async function readJsonl<T = unknown>(path: string): Promise<{ rows: JsonlRow<T>[]; problems: JsonlProblem[] }> {
  const rows: JsonlRow<T>[] = [];
  const problems: JsonlProblem[] = [];
  for await (const entry of readLines(path)) {
    if (!entry.terminated) {
      problems.push({ line: entry.line, reason: 'torn last line (no newline: the writer was interrupted)' });
      continue;
    }
    if (entry.text.trim() === '') {
      problems.push({ line: entry.line, reason: 'blank line' });
      continue;
    }
    try {
      rows.push({ line: entry.line, value: JSON.parse(entry.text) as T, text: entry.text });
    } catch (error) {
      problems.push({ line: entry.line, reason: `not valid JSON (${(error as Error).message})` });
    }
  }
  return { rows, problems };
}
