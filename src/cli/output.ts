// Owns how the CLI talks to people and scripts: errors on stderr with the fix
// on the same line, problems one per line, a live progress line only on a
// terminal, and JSON on stdout when asked.

import { FactoryError } from '../core/errors.js';
import { UsageError } from './usage-errors.js';

export const PROGRAM = 'episode-factory';

export interface Streams {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
}

export const processStreams: Streams = { stdout: process.stdout, stderr: process.stderr };

/** Prints an error (as one JSON object on stderr when the command was asked for JSON) and returns its exit status. */
export function reportError(error: unknown, streams: Streams, options: { json?: boolean } = {}): number {
  if (options.json) {
    const known = error instanceof FactoryError;
    const body = {
      error: {
        code: known ? error.code : 'internal',
        ...(error instanceof UsageError ? { command: error.command } : {}),
        message: error instanceof Error ? error.message : String(error),
        ...(known && error.fix ? { fix: error.fix } : {}),
        ...(known && error.problems.length > 0 ? { problems: error.problems } : {}),
      },
    };
    streams.stderr.write(JSON.stringify(body) + '\n');
    return known ? error.exitStatus : 2;
  }
  if (error instanceof FactoryError) {
    for (const problem of error.problems) streams.stderr.write(`  ${problem.where}: ${problem.reason}\n`);
    const who = error instanceof UsageError ? error.command : PROGRAM;
    streams.stderr.write(`${who}: ${error.message}${error.fix ? ` — fix: ${error.fix}` : ''}\n`);
    return error.exitStatus;
  }
  const message = error instanceof Error ? error.message : String(error);
  streams.stderr.write(`${PROGRAM}: internal error: ${message} — fix: this is a bug; rerun with EPISODE_FACTORY_DEBUG=1 for the stack and report it\n`);
  if (process.env.EPISODE_FACTORY_DEBUG && error instanceof Error && error.stack) streams.stderr.write(error.stack + '\n');
  return 2;
}

export function writeJson(streams: Streams, value: unknown): void {
  streams.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

/** A one-line progress display that rewrites itself on a terminal (at most ten times a second) and stays silent elsewhere. */
export class ProgressLine {
  private visible = false;
  private lastWrite = -Infinity;
  constructor(private readonly stream: Streams['stderr'], private readonly enabled: boolean) {}

  /** True when a line would be shown: callers can skip building the text otherwise. */
  get active(): boolean {
    return this.enabled && this.stream.isTTY === true;
  }

  update(text: string, options: { force?: boolean } = {}): void {
    if (!this.active) return;
    const now = performance.now();
    if (!options.force && now - this.lastWrite < 100) return;
    this.lastWrite = now;
    const width = (this.stream as { columns?: number }).columns ?? 100;
    this.stream.write(`\r${text.slice(0, width - 1).padEnd(Math.min(width - 1, text.length))}\x1b[K`);
    this.visible = true;
  }

  clear(): void {
    if (this.visible) this.stream.write('\r\x1b[K');
    this.visible = false;
  }
}

/** Where a pass over a dataset is: what dataset-reader's passes report. */
export interface PassDone {
  records: number;
  bytes: number;
  totalBytes: number;
}

/**
 * The progress of a long pass over a dataset on a terminal: records done, the
 * share of the file read, the rate and the time left, e.g. `dedup: reading
 * 120,000 records (48%), 2,400/s, 52s left`. Silent with --json, --quiet or
 * when stderr is not a terminal. `stage` names what the pass does.
 */
export class PassProgress {
  private readonly line: ProgressLine;
  private started = performance.now();
  private stage = '';

  constructor(streams: Streams, private readonly label: string, enabled: boolean) {
    this.line = new ProgressLine(streams.stderr, enabled);
  }

  /** Starts a new stage (a second pass): the rate and time left start over. */
  begin(stage: string): void {
    this.stage = stage;
    this.started = performance.now();
  }

  readonly update = (done: PassDone): void => {
    if (!this.line.active) return;
    const seconds = (performance.now() - this.started) / 1000;
    const fraction = done.totalBytes > 0 ? done.bytes / done.totalBytes : 1;
    const rate = seconds > 0 ? done.records / seconds : 0;
    const left = fraction > 0 ? (seconds * (1 - fraction)) / fraction : Number.NaN;
    const stage = this.stage === '' ? '' : `${this.stage} `;
    this.line.update(`${this.label}: ${stage}${done.records.toLocaleString('en-US')} records (${Math.floor(fraction * 100)}%), ${Math.round(rate).toLocaleString('en-US')}/s, ${shortDuration(left)} left`);
  };

  clear(): void {
    this.line.clear();
  }
}

/** "12s", "3m05s", "1h02m": short enough for a progress line. */
export function shortDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '?';
  const whole = Math.round(seconds);
  if (whole < 60) return `${whole}s`;
  if (whole < 3600) return `${Math.floor(whole / 60)}m${String(whole % 60).padStart(2, '0')}s`;
  return `${Math.floor(whole / 3600)}h${String(Math.floor((whole % 3600) / 60)).padStart(2, '0')}m`;
}

export function percent(fraction: number): string {
  return `${(fraction * 100).toFixed(1)}%`;
}

/** Rows as aligned columns, two spaces apart; the last column is never padded. */
export function formatTable(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  ')).join('\n') + '\n';
}
