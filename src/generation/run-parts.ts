// Owns the finished work of an unfinished run: the run's identity (run.json)
// and its parts, each a contiguous range of the plan written as
// parts/<start>-<end>.episodes.jsonl and .rejected.jsonl, .trace.jsonl (the
// trace events of all its episodes, see part-trace-archive.ts) and .arrow (its
// rows as Arrow columns, when the run writes columnar copies), then sealed by a
// .done.json marker that carries their hashes. Every file is finished
// atomically and the marker comes last, so after any crash a part is either
// whole and sealed or it is not there; whatever is not sealed is deleted and
// its episodes run again on --resume.

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { canonicalJson } from '../core/canonical-json.js';
import { FactoryError } from '../core/errors.js';
import { TEMPORARY_SUFFIX, writeFileAtomically } from '../records/atomic-file.js';

export const PARTS_DIR = 'parts';
export const RUN_FILE = 'run.json';
export const RUN_FORMAT = 'episode-factory.run.v1';

/** Everything that decides the bytes of a run's records: a resumed run must match it field for field. */
export interface RunIdentity {
  format: typeof RUN_FORMAT;
  lane: string;
  lane_sha256: string;
  factory_version: string;
  produced_at: string;
  seeds: string;
  /** The --task selection, or null for every task. */
  tasks: string[] | null;
  variants: string[] | null;
  /** "scripted" or ollama:<model>. */
  policy: string;
  /** The model's digest, when a model plays. */
  model_digest: string | null;
  /** ollama:<model> and its digest, when a model plays the user; absent otherwise. */
  user?: string;
  user_digest?: string;
  formats: string[];
  /** Episodes in the whole plan; a shard runs a slice of it. */
  plan_episodes: number;
  shard: { index: number; count: number } | null;
  /** The plan indices this run covers, end exclusive. */
  slice: { start: number; end: number };
}

export interface Rejection {
  record_id: string;
  stage: string;
  reason: string;
}

export interface PartSummary {
  start: number;
  end: number;
  written: number;
  /** Episodes that did not verify (stages plan, run, schema, replay). */
  rejected: number;
  completed: number;
  faults_fired: Record<string, number>;
  rejections: Rejection[];
  /** Episodes the model server cut short (stage infra); in rejected.jsonl too. Absent in parts sealed before it was counted. */
  infra_errors?: number;
  infra_failures?: Rejection[];
  /**
   * sha256 of each sealed file; `trace`, the part's trace archive; `arrow` when the run writes columnar
   * copies (the part's rows as an Arrow IPC stream). A marker without `trace` is from before trace archives: its part is run again.
   */
  files: { episodes: string; rejected: string; trace: string; arrow?: string };
}

function pad(index: number): string {
  return String(index).padStart(9, '0');
}

export function partName(start: number, end: number): string {
  return `${pad(start)}-${pad(end)}`;
}

function sha256(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

function joinLines(lines: readonly string[]): string {
  return lines.length === 0 ? '' : lines.join('\n') + '\n';
}

/**
 * Writes one part and seals it. The lines are whole JSONL rows without their newlines; `arrow` is the written rows as an
 * Arrow IPC stream; `trace` is the sha256 of the part's trace archive, already in place (PartTraceArchive.seal).
 */
export function writePart(
  staging: string,
  summary: Omit<PartSummary, 'files'>,
  episodeLines: readonly string[],
  rejectedLines: readonly string[],
  trace: string,
  arrow?: Uint8Array,
): PartSummary {
  const directory = join(staging, PARTS_DIR);
  mkdirSync(directory, { recursive: true });
  const name = partName(summary.start, summary.end);
  const episodes = joinLines(episodeLines);
  const rejected = joinLines(rejectedLines);
  writeFileAtomically(join(directory, `${name}.episodes.jsonl`), episodes);
  writeFileAtomically(join(directory, `${name}.rejected.jsonl`), rejected);
  if (arrow) writeFileAtomically(join(directory, `${name}.arrow`), [arrow]);
  const sealed: PartSummary = { ...summary, files: { episodes: sha256(episodes), rejected: sha256(rejected), trace, ...(arrow ? { arrow: sha256(arrow) } : {}) } };
  writeFileAtomically(join(directory, `${name}.done.json`), JSON.stringify(sealed) + '\n');
  return sealed;
}

export function partFile(staging: string, part: Pick<PartSummary, 'start' | 'end'>, kind: 'episodes' | 'rejected'): string {
  return join(staging, PARTS_DIR, `${partName(part.start, part.end)}.${kind}.jsonl`);
}

/** The part's trace archive: written while it runs, sealed with it, published as traces/<part name>.jsonl. */
export function partTraceFile(staging: string, part: Pick<PartSummary, 'start' | 'end'>): string {
  return join(staging, PARTS_DIR, `${partName(part.start, part.end)}.trace.jsonl`);
}

/** The part's rows as an Arrow IPC stream, when it was sealed with one. */
export function partArrowFile(staging: string, part: Pick<PartSummary, 'start' | 'end'>): string {
  return join(staging, PARTS_DIR, `${partName(part.start, part.end)}.arrow`);
}

/**
 * The sealed parts, in plan order, after deleting everything else in parts/:
 * temporary files, part files without a marker, and a part whose files no
 * longer match the hashes its marker sealed.
 */
export function finishedParts(staging: string): PartSummary[] {
  const directory = join(staging, PARTS_DIR);
  if (!existsSync(directory)) return [];
  const entries = readdirSync(directory);
  const sealed: PartSummary[] = [];
  const keep = new Set<string>();
  for (const entry of entries) {
    const match = /^([0-9]{9})-([0-9]{9})\.done\.json$/.exec(entry);
    if (!match) continue;
    let summary: PartSummary;
    try {
      summary = JSON.parse(readFileSync(join(directory, entry), 'utf8')) as PartSummary;
    } catch {
      continue;
    }
    const files: [string, string | undefined][] = [
      [partFile(staging, summary, 'episodes'), summary.files?.episodes],
      [partFile(staging, summary, 'rejected'), summary.files?.rejected],
      [partTraceFile(staging, summary), summary.files?.trace],
      ...(summary.files?.arrow === undefined ? [] : [[partArrowFile(staging, summary), summary.files.arrow] as [string, string]]),
    ];
    const intact = files.every(([file, hash]) => hash !== undefined && existsSync(file) && sha256(readFileSync(file)) === hash);
    if (!intact || summary.start !== Number(match[1]) || summary.end !== Number(match[2])) continue;
    sealed.push(summary);
    for (const kind of ['episodes.jsonl', 'rejected.jsonl', 'trace.jsonl', 'done.json', ...(summary.files.arrow === undefined ? [] : ['arrow'])]) keep.add(`${partName(summary.start, summary.end)}.${kind}`);
  }
  for (const entry of entries) if (!keep.has(entry) || entry.endsWith(TEMPORARY_SUFFIX)) rmSync(join(directory, entry), { force: true });
  sealed.sort((left, right) => left.start - right.start);
  for (let index = 1; index < sealed.length; index++) {
    if (sealed[index]!.start < sealed[index - 1]!.end) {
      throw new FactoryError('dataset_corrupt', `${directory}: parts ${partName(sealed[index - 1]!.start, sealed[index - 1]!.end)} and ${partName(sealed[index]!.start, sealed[index]!.end)} overlap`, {
        fix: 'this directory was written by two runs at once; run again with --restart',
      });
    }
  }
  return sealed;
}

/** The ranges of [start, end) that no sealed part covers, in order. */
export function missingRanges(parts: readonly Pick<PartSummary, 'start' | 'end'>[], start: number, end: number): { start: number; end: number }[] {
  const missing: { start: number; end: number }[] = [];
  let cursor = start;
  for (const part of parts) {
    if (part.start > cursor) missing.push({ start: cursor, end: Math.min(part.start, end) });
    cursor = Math.max(cursor, part.end);
  }
  if (cursor < end) missing.push({ start: cursor, end });
  return missing.filter((range) => range.end > range.start);
}

export function writeRunIdentity(staging: string, identity: RunIdentity): void {
  writeFileAtomically(join(staging, RUN_FILE), JSON.stringify(identity, null, 2) + '\n');
}

export function readRunIdentity(staging: string): RunIdentity | undefined {
  const path = join(staging, RUN_FILE);
  if (!existsSync(path)) return undefined;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as RunIdentity;
  } catch {
    return undefined;
  }
}

/** The first field in which two identities differ, for an error that says what changed. */
export function identityDifference(left: RunIdentity, right: RunIdentity): string | undefined {
  for (const key of Object.keys({ ...left, ...right }) as (keyof RunIdentity)[]) {
    if (canonicalJson(left[key] ?? null) !== canonicalJson(right[key] ?? null)) {
      return `${key} was ${JSON.stringify(left[key] ?? null)}, now ${JSON.stringify(right[key] ?? null)}`;
    }
  }
  return undefined;
}
