// Owns `replay DIR`: re-verify every record of a dataset from the records
// alone. Lanes are found by the name each record carries and must still hash
// to the value it recorded; corrupt or torn lines are failures with their line
// numbers, never skipped; and the file is compared with its manifest, since a
// deleted line leaves every remaining record verifiable. The file is streamed
// a line at a time: a replay's memory does not grow with the dataset.

import { join } from 'node:path';
import { errorMessage, FactoryError } from '../core/errors.js';
import { MAX_RECORD_DEPTH, parseBoundedJson } from '../core/bounded-json.js';
import { lineProblem, readLines } from '../records/jsonl.js';
import { createReadStream } from 'node:fs';
import { compareWithManifest, readVerifiableManifest } from '../records/manifest-verification.js';
import { isRecordFilePath, recordFiles } from '../records/record-files.js';
import { RecordIdIndex, type RecordPlace } from '../dataset/dataset-reader.js';
import { ReplayPool, threadsFor } from './replay-pool.js';
import type { LineVerdict } from './record-replay.js';

export interface ReplayFailure {
  /** The record id, or `episodes.jsonl:<line>` for a line that is not a record. */
  where: string;
  problems: string[];
}

export interface ReplayDatasetSummary {
  dir: string;
  /** Lines that parsed as JSON (and were selected). */
  records: number;
  verified: number;
  /** Records that did not verify. */
  failed: number;
  /** Lines that are not records at all: torn, blank, not UTF-8 or not JSON. */
  corrupt_lines: number;
  /**
   * How episodes.jsonl differs from manifest.json (a line deleted or added
   * leaves every remaining record verifiable: only the manifest shows it);
   * empty when they agree. `no_manifest` is set when there was none to check.
   */
  manifest_problems: string[];
  no_manifest?: true;
  /** The first MAX_LISTED_FAILURES failures, in file order. */
  failures: ReplayFailure[];
  /** Failures past those, counted but not listed (each was handed to onFailure). */
  unlisted_failures: number;
  wall_seconds: number;
}

/** Failures a summary lists; the rest are counted, so a replay of millions of failing records stays in bounded memory. */
export const MAX_LISTED_FAILURES = 1000;

export interface ReplayDatasetOptions {
  recordIds?: string[];
  /** A lane file to use instead of finding each record's lane by name. */
  lane?: string;
  /**
   * Threads to replay on (default 1: this thread); `auto` is one per core for
   * a file of 200 lines or more (threadsFor). The summary is the same whatever the count.
   */
  workers?: number | 'auto';
  onRecord?: (done: number, total: number, ok: boolean) => void;
  /** Each failure as it is found, listed or not. */
  onFailure?: (failure: ReplayFailure) => void;
}

/** The record files against the manifest: what differs, or that there is no manifest to compare with. */
async function manifestCheck(dir: string, files: readonly string[]): Promise<{ manifestProblems: string[]; noManifest: boolean }> {
  try {
    const read = readVerifiableManifest(dir);
    if (read === undefined) return { manifestProblems: [], noManifest: true };
    const listed = new Set(read.manifest.files.map((file) => file.path));
    const unlisted = files.filter((file) => !listed.has(file)).map((file) => `${file} is not in the manifest`);
    // The record files the manifest lists are compared too: one the layout has under another name (another count) is missing.
    const recorded = read.manifest.files.map((file) => file.path).filter((path) => isRecordFilePath(path) && path.endsWith('.jsonl'));
    const differences = await compareWithManifest(dir, read.manifest, new Set([...files, ...recorded]));
    return { manifestProblems: [...unlisted, ...differences.map((difference) => `${difference.path}: ${difference.reason}`)], noManifest: false };
  } catch (error) {
    const problems = error instanceof FactoryError && error.problems.length > 0 ? error.problems.map((problem) => `${problem.where}: ${problem.reason}`) : [errorMessage(error)];
    return { manifestProblems: problems, noManifest: false };
  }
}

/** The lines of files (a last line without a newline counted too), counted without reading them as text. */
async function countLines(paths: readonly string[]): Promise<number> {
  let lines = 0;
  for (const path of paths) {
    let last = 0x0a;
    for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
      for (let index = chunk.indexOf(0x0a); index >= 0; index = chunk.indexOf(0x0a, index + 1)) lines++;
      if (chunk.length > 0) last = chunk[chunk.length - 1]!;
    }
    if (last !== 0x0a) lines++;
  }
  return lines;
}

export async function replayDataset(dir: string, options: ReplayDatasetOptions = {}): Promise<ReplayDatasetSummary> {
  const started = performance.now();
  // episodes.jsonl, or a big dataset's data/ files in order; a layout with a file missing is refused here, naming it.
  const files = recordFiles(dir).jsonl;
  const recordIds = options.recordIds ?? [];
  const filtered = recordIds.length > 0;
  const wanted = new Set(recordIds);
  const found = new Set<string>();
  // Like a corrupt line, a line removed elsewhere is not the business of a replay of chosen records. The files are
  // hashed while the records replay (it never rejects): on threads, this thread is otherwise idle.
  const manifest = filtered ? Promise.resolve({ manifestProblems: [], noManifest: false }) : manifestCheck(dir, files);
  const failures: ReplayFailure[] = [];
  let unlisted = 0;
  const fail = (failure: ReplayFailure) => {
    if (failures.length < MAX_LISTED_FAILURES) failures.push(failure);
    else unlisted++;
    options.onFailure?.(failure);
  };
  let corruptLines = 0;

  // Streamed: one line at a time, so a replay's memory does not grow with the file (the ids seen are kept, to catch a repeat).
  // Records are replayed on --workers threads; what each one found is taken in file order, so the summary is the same bytes whatever the count.
  // A given number of threads start before the lines are counted (a thread takes over half a second to load); `auto` needs the count.
  const known = options.workers === 'auto' ? undefined : threadsFor(options.workers, 0);
  let pool: ReplayPool<Item> | undefined = known === undefined ? undefined : newPool(known);
  let total: number;
  try {
    total = filtered ? recordIds.length : await countLines(files.map((file) => join(dir, file)));
  } catch (error) {
    await pool?.close();
    throw error;
  }
  let selected = 0;
  let verified = 0;
  let failed = 0;
  // An item is a line decided here (not UTF-8, too long, blank) or one handed to a thread, which parses it and says what record it is.
  type Item = { file: number; line: number; problem?: string; place?: RecordPlace; text?: string };
  // Where each record_id was first seen, by a fingerprint confirmed against the line (a few dozen bytes a record, not the id).
  const firstSeen = new RecordIdIndex(dir);
  function newPool(threads: number): ReplayPool<Item> {
    return new ReplayPool<Item>({ workers: threads, mode: 'replay', ...(options.lane === undefined ? {} : { lane: options.lane }) }, onVerdict);
  }
  function onVerdict(item: Item, found: LineVerdict | undefined): void {
    const lineWhere = `${files[item.file]}:${item.line}`;
    if (found === undefined || 'corrupt' in found) {
      fail({ where: lineWhere, problems: [item.problem ?? (found as { corrupt: string }).corrupt] });
      corruptLines++;
      return;
    }
    selected++;
    const { recordId, verdict } = found;
    // Verdicts arrive in file order, so the first line with an id is the one kept; a later one fails whatever its replay found.
    const seenAt = recordId === undefined ? undefined : firstSeen.claim(recordId, item.place!, item.text!);
    const problems =
      seenAt !== undefined
        ? [`line ${item.line} repeats the record_id of ${seenAt.file === files[item.file] ? `line ${seenAt.line}` : `${seenAt.file}:${seenAt.line}`}`]
        : verdict.ok
          ? undefined
          : 'laneError' in verdict
            ? [`cannot load lane "${found.lane}": ${verdict.laneError.message}${verdict.laneError.fix ? ` (${verdict.laneError.fix})` : ''}`]
            : verdict.problems;
    if (problems === undefined) verified++;
    else {
      failed++;
      fail({ where: recordId ?? lineWhere, problems });
    }
    options.onRecord?.(selected, Math.max(total, selected), problems === undefined);
  }
  pool ??= newPool(threadsFor(options.workers, total));
  try {
    for (const [fileIndex, file] of files.entries()) {
      for await (const entry of readLines(join(dir, file))) {
        const problem = lineProblem(entry);
        if (problem !== undefined) {
          // A corrupt line elsewhere in the file is not the business of a replay of chosen records.
          if (!filtered) await pool.add({ file: fileIndex, line: entry.line, problem });
          continue;
        }
        if (filtered) {
          // Only the chosen records are replayed, so this thread reads each line's id (a line that is not JSON is nobody's).
          let recordId: unknown;
          try {
            recordId = (parseBoundedJson(entry.text, { maxDepth: MAX_RECORD_DEPTH, where: 'the line' }) as { record_id?: unknown } | null)?.record_id;
          } catch {
            continue;
          }
          if (typeof recordId !== 'string' || !wanted.has(recordId)) continue;
          found.add(recordId);
        }
        await pool.add({ file: fileIndex, line: entry.line, place: { file, line: entry.line, offset: entry.offset, bytes: entry.bytes }, text: entry.text }, { line: entry.line, text: entry.text });
      }
    }
    await pool.finish();
  } catch (error) {
    await pool.close();
    throw error;
  }
  if (filtered) {
    const missing = recordIds.filter((id) => !found.has(id));
    if (missing.length > 0) {
      throw new FactoryError('usage', `${dir} has no record ${missing.map((id) => `"${id}"`).join(', ')}`, { fix: 'check the id against the record_id fields of the file' });
    }
  }

  const { manifestProblems, noManifest } = await manifest;
  return {
    dir,
    records: selected,
    verified,
    failed,
    corrupt_lines: corruptLines,
    manifest_problems: manifestProblems,
    ...(noManifest ? { no_manifest: true as const } : {}),
    failures,
    unlisted_failures: unlisted,
    wall_seconds: Math.round(performance.now() - started) / 1000,
  };
}
