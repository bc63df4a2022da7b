// Owns `replay DIR`: re-verify every record of a dataset from the records
// alone. Lanes are found by the name each record carries and must still hash
// to the value it recorded; corrupt or torn lines are failures with their line
// numbers, never skipped; and the file is compared with its manifest, since a
// deleted line leaves every remaining record verifiable. The file is streamed
// a line at a time: a replay's memory does not grow with the dataset.

import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { errorMessage, FactoryError } from '../core/errors.js';
import { MAX_RECORD_DEPTH, parseBoundedJson } from '../core/bounded-json.js';
import { jsonLineProblem, lineProblem, readLines } from '../records/jsonl.js';
import { createReadStream } from 'node:fs';
import { compareWithManifest, readVerifiableManifest } from '../records/manifest-verification.js';
import { EPISODES_FILE } from '../generation/dataset-directory.js';
import { ReplayPool, threadsFor } from './replay-pool.js';

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

/** episodes.jsonl against the manifest: what differs, or that there is no manifest to compare with. */
async function manifestCheck(dir: string): Promise<{ manifestProblems: string[]; noManifest: boolean }> {
  try {
    const read = readVerifiableManifest(dir);
    if (read === undefined) return { manifestProblems: [], noManifest: true };
    if (!read.manifest.files.some((listed) => listed.path === EPISODES_FILE)) return { manifestProblems: [`${EPISODES_FILE} is not in the manifest`], noManifest: false };
    const differences = await compareWithManifest(dir, read.manifest, new Set([EPISODES_FILE]));
    return { manifestProblems: differences.map((difference) => `${difference.path}: ${difference.reason}`), noManifest: false };
  } catch (error) {
    const problems = error instanceof FactoryError && error.problems.length > 0 ? error.problems.map((problem) => `${problem.where}: ${problem.reason}`) : [errorMessage(error)];
    return { manifestProblems: problems, noManifest: false };
  }
}

/** The lines of a file (a last line without a newline counted too), counted without reading them as text. */
async function countLines(path: string): Promise<number> {
  let lines = 0;
  let last = 0x0a;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    for (let index = chunk.indexOf(0x0a); index >= 0; index = chunk.indexOf(0x0a, index + 1)) lines++;
    if (chunk.length > 0) last = chunk[chunk.length - 1]!;
  }
  return last === 0x0a ? lines : lines + 1;
}

export async function replayDataset(dir: string, options: ReplayDatasetOptions = {}): Promise<ReplayDatasetSummary> {
  const started = performance.now();
  const file = join(dir, EPISODES_FILE);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new FactoryError('dataset_not_found', `${dir} is not a directory`, { fix: 'pass the directory `generate` wrote, e.g. datasets/tool-world-v1' });
  }
  if (!existsSync(file)) {
    throw new FactoryError('dataset_not_found', `${dir} has no ${EPISODES_FILE}`, { fix: 'run `episode-factory generate <lane> --out ' + dir + '` first' });
  }
  const recordIds = options.recordIds ?? [];
  const filtered = recordIds.length > 0;
  const wanted = new Set(recordIds);
  const found = new Set<string>();
  // Like a corrupt line, a line removed elsewhere is not the business of a replay of chosen records.
  const { manifestProblems, noManifest } = filtered ? { manifestProblems: [], noManifest: false } : await manifestCheck(dir);
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
  const total = filtered ? recordIds.length : await countLines(file);
  let selected = 0;
  let verified = 0;
  let failed = 0;
  type Item = { where: string; corrupt?: true; problems?: string[]; laneName?: string };
  const pool = new ReplayPool<Item>({ workers: threadsFor(options.workers, total), mode: 'replay', ...(options.lane === undefined ? {} : { lane: options.lane }) }, (item, verdict) => {
    if (item.corrupt) {
      fail({ where: item.where, problems: item.problems! });
      corruptLines++;
      return;
    }
    selected++;
    const ok = verdict?.ok === true;
    if (ok) verified++;
    else {
      failed++;
      if (verdict === undefined) fail({ where: item.where, problems: item.problems! });
      else if ('laneError' in verdict) {
        const fix = verdict.laneError.fix ? ` (${verdict.laneError.fix})` : '';
        fail({ where: item.where, problems: [`cannot load lane "${item.laneName}": ${verdict.laneError.message}${fix}`] });
      } else if (!verdict.ok) fail({ where: item.where, problems: verdict.problems });
    }
    options.onRecord?.(selected, Math.max(total, selected), ok);
  });
  const firstLine = new Map<string, number>();
  try {
    for await (const entry of readLines(file)) {
      let value: { record_id?: unknown; provenance?: { lineage?: { lane?: unknown } } } | undefined;
      let problem = lineProblem(entry);
      if (problem === undefined) {
        try {
          value = parseBoundedJson(entry.text, { maxDepth: MAX_RECORD_DEPTH, where: 'the line' }) as typeof value;
        } catch (error) {
          problem = jsonLineProblem(error);
        }
      }
      if (problem !== undefined) {
        // A corrupt line elsewhere in the file is not the business of a replay of chosen records.
        if (!filtered) await pool.add({ where: `${EPISODES_FILE}:${entry.line}`, corrupt: true, problems: [problem] });
        continue;
      }
      const recordId = typeof value?.record_id === 'string' ? value.record_id : undefined;
      if (filtered) {
        if (recordId === undefined || !wanted.has(recordId)) continue;
        found.add(recordId);
      }
      const where = recordId ?? `${EPISODES_FILE}:${entry.line}`;
      const laneName = value?.provenance?.lineage?.lane;
      const seenAt = recordId === undefined ? undefined : firstLine.get(recordId);
      if (recordId !== undefined && seenAt === undefined) firstLine.set(recordId, entry.line);
      if (seenAt !== undefined) await pool.add({ where, problems: [`line ${entry.line} repeats the record_id of line ${seenAt}`] });
      else if (typeof laneName !== 'string') await pool.add({ where, problems: [`line ${entry.line} has no provenance.lineage.lane`] });
      else await pool.add({ where, laneName }, { line: entry.line, text: entry.text, lane: laneName });
    }
    await pool.finish();
  } catch (error) {
    await pool.close();
    throw error;
  }
  if (filtered) {
    const missing = recordIds.filter((id) => !found.has(id));
    if (missing.length > 0) {
      throw new FactoryError('usage', `${file} has no record ${missing.map((id) => `"${id}"`).join(', ')}`, { fix: 'check the id against the record_id fields of the file' });
    }
  }

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
