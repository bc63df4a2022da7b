// Owns `dedup DIR --out DIR2`: one pass over a dataset in file order that
// keeps the first record of every duplicate group and drops the rest, for one
// of three reasons tried in this order: `exact` (the trajectory hash of an
// earlier record, kept or dropped),
// `near` (MinHash/LSH candidates confirmed by shingle Jaccard), `semantic`
// (embedding cosine). A record is only ever compared with records already
// kept, so every dropped row names a record that is in the output. The output
// directory gets the kept records with dedup lineage, the dropped rows with
// their reason, and dedup.json, a deterministic report that also marks the
// directory as dedup output so a later run may replace it.
//
// Memory is bounded: the records are streamed twice (decide, then write), and
// what stays in memory is small per record: the decisions in typed arrays, a
// short trajectory hash per distinct trajectory, and the LSH buckets of the
// kept records. Their shingles, and semantic dedup's vectors, are on disk.

import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { FactoryError } from '../core/errors.js';
import { doubled } from '../core/typed-arrays.js';
import type { EpisodeRecord } from '../records/episode-record.js';
import { JsonlAppender } from '../records/jsonl.js';
import { deriveRecord } from '../records/lineage.js';
import { describeFile, type ManifestFile } from '../records/manifest.js';
import { assertDatasetDirectory, EPISODES_FILE, passOverDataset, type PassOptions } from './dataset-reader.js';
import { DATA_DIRECTORY, DEFAULT_MAX_FILE_BYTES, layOutJsonl, presentRecordFiles, recordFiles } from '../records/record-files.js';
import { cosineSimilarity, DEFAULT_EMBED_BATCH, type Embedder } from '../models/embedding/embedder.js';
import { type Banding, bandingFor, exactJaccard, LshIndex, MINHASH_PERMUTATIONS, MinHasher, recordShingles, SHINGLE_SIZE } from './minhash.js';
import { SpillFile } from './spill-file.js';
import { trajectory, trajectoryHash, turnCalls } from './trajectory.js';

export const DEDUP_OPERATION = 'dedup';
export const DROPPED_FILE = 'dropped.jsonl';
export const DEDUP_REPORT_FILE = 'dedup.json';
export const DEDUP_REPORT_FORMAT = 'episode-factory.dedup.v2';
/** The format before a source could be several files (`source` was one file); an output in it may still be replaced. */
const EARLIER_DEDUP_REPORT_FORMAT = 'episode-factory.dedup.v1';
export const DEFAULT_NEAR_THRESHOLD = 0.9;
export const DEFAULT_COSINE_THRESHOLD = 0.95;
const PARTIAL_DIRECTORY = '.dedup-partial';

export type DuplicateReason = 'exact' | 'near' | 'semantic';

export interface DroppedRow {
  record_id: string;
  reason: DuplicateReason;
  /** The kept record this one duplicates. */
  duplicate_of: string;
  /** 1 for exact, the shingle Jaccard for near, the cosine for semantic. */
  similarity: number;
  record: EpisodeRecord;
}

export interface DedupOptions {
  dir: string;
  outDir: string;
  /** Jaccard threshold in (0, 1] for near duplicates, default 0.9; false turns near dedup off. */
  near?: number | false;
  /** Turns on semantic dedup. */
  embedder?: Embedder;
  /** Cosine threshold in (0, 1] for semantic duplicates, default 0.95. */
  cosine?: number;
  /** Past this many bytes, the kept records are written as data/train-NNNNN-of-NNNNN.jsonl files (default 500 MiB). */
  maxFileBytes?: number;
  /** Notes on the way (the embeddings made so far). */
  onProgress?: (message: string) => void;
  /** Each pass as it starts ("comparing", "writing"), and where it is: what a progress line shows. */
  onStage?: (stage: string) => void;
  onPass?: PassOptions['onProgress'];
}

export interface NearSettings {
  threshold: number;
  permutations: number;
  shingle_size: number;
  bands: number;
  rows: number;
}

export interface DedupSummary {
  dir: string;
  out_dir: string;
  records: number;
  kept: number;
  dropped: number;
  by_reason: Record<DuplicateReason, number>;
  /** Null when near dedup was turned off. */
  near_threshold: number | null;
  near_banding: { bands: number; rows: number } | null;
  cosine_threshold?: number;
  embed_model?: string;
  embed_model_digest?: string;
  wall_seconds: number;
}

/** dedup.json: what produced the directory, without paths or clock, so the same input gives the same bytes. */
export interface DedupReport {
  format: typeof DEDUP_REPORT_FORMAT;
  operation: typeof DEDUP_OPERATION;
  /** The source's record files (episodes.jsonl, or its data/ files in order). */
  source: ManifestFile[];
  near: NearSettings | null;
  semantic: { embedder: string; digest: string | null; cosine_threshold: number } | null;
  counts: { records: number; kept: number; dropped: number; by_reason: Record<DuplicateReason, number> };
  files: ManifestFile[];
}

/**
 * What semantic dedup embeds: the normalised trajectory (roles, text, calls
 * with canonical arguments, tool outcomes, and not the world data inside tool
 * results), one turn a line. Unlike near dedup it keeps the user's words: an
 * embedding compares what they mean, so a reworded request stays close.
 */
export function episodeText(record: EpisodeRecord): string {
  return trajectory(record)
    .map((turn) => {
      switch (turn.role) {
        case 'system':
        case 'user':
          return `${turn.role}: ${turn.text}`;
        case 'assistant': {
          const parts = [`assistant: ${turn.text}`];
          for (const call of turnCalls(turn)) parts.push(`[call ${call.tool} ${call.arguments}]`);
          if (turn.malformed !== undefined) parts.push(`[malformed call: ${turn.malformed}]`);
          return parts.join(' ');
        }
        case 'tool':
          return `tool: ${turn.ok ? 'ok' : `error ${turn.kind ?? 'unknown'}`}`;
      }
    })
    .join('\n');
}

function checkThreshold(name: string, value: number, flag: string): void {
  if (typeof value !== 'number' || !(value > 0 && value <= 1)) {
    throw new FactoryError('usage', `${name} threshold must be a number in (0, 1], got ${String(value)}`, { fix: `pass ${flag} with a value such as 0.9` });
  }
}

function canonicalPath(path: string): string {
  return existsSync(path) ? realpathSync(path) : resolve(path);
}

function isDedupOutput(outDir: string): boolean {
  const report = join(outDir, DEDUP_REPORT_FILE);
  if (!existsSync(report)) return false;
  try {
    const { format } = JSON.parse(readFileSync(report, 'utf8')) as { format?: unknown };
    return format === DEDUP_REPORT_FORMAT || format === EARLIER_DEDUP_REPORT_FORMAT;
  } catch {
    return false;
  }
}

/** The source is never written, and nothing that dedup did not write is ever replaced. */
function checkOutputDirectory(dir: string, outDir: string): void {
  const suggestion = `${dir.replace(/\/+$/, '')}-dedup`;
  if (canonicalPath(dir) === canonicalPath(outDir)) {
    throw new FactoryError('usage', `--out ${outDir} is the source dataset; dedup never overwrites its input`, { fix: `pass a new directory, e.g. --out ${suggestion}` });
  }
  if (!existsSync(outDir)) return;
  if (!statSync(outDir).isDirectory()) {
    throw new FactoryError('usage', `--out ${outDir} exists and is not a directory`, { fix: `pass a new directory, e.g. --out ${suggestion}` });
  }
  const entries = readdirSync(outDir).filter((entry) => entry !== PARTIAL_DIRECTORY);
  if (entries.length > 0 && !isDedupOutput(outDir)) {
    throw new FactoryError('usage', `--out ${outDir} is not empty and is not the output of an earlier dedup (it has no ${DEDUP_REPORT_FILE})`, {
      fix: `pass an empty or new directory, e.g. --out ${suggestion}, or remove ${outDir} first`,
    });
  }
}

interface NearSearch {
  threshold: number;
  banding: Banding;
  hasher: MinHasher;
  index: LshIndex;
}

/**
 * Kept records a new one is compared with per LSH bucket: the most recent
 * this many. Episodes of one task differ in little, so thousands of them
 * share a bucket; compared with all, a dedup of 250,000 such records made
 * over a billion comparisons (13 million at 25,000). A near duplicate of an
 * older record is still found through any other bucket it shares with it
 * that is not as full.
 */
export const NEAR_BUCKET_LIMIT = 64;

function nearSearchFor(threshold: number): NearSearch {
  const banding = bandingFor(threshold, MINHASH_PERMUTATIONS);
  return { threshold, banding, hasher: new MinHasher(MINHASH_PERMUTATIONS), index: new LshIndex(banding) };
}

type Decision = { kept: true } | { kept: false; reason: DuplicateReason; of: number; similarity: number };

/** The dropped row with the dropped record's original line embedded as is, so its bytes survive. */
function droppedLine(record: EpisodeRecord, decision: Extract<Decision, { kept: false }>, keptId: string, text: string): string {
  const head = JSON.stringify({ record_id: record.record_id, reason: decision.reason, duplicate_of: keptId, similarity: decision.similarity });
  return `${head.slice(0, -1)},"record":${text}}`;
}

/** The reason codes of DecisionLog: kept, then each DuplicateReason. */
const REASONS: (DuplicateReason | 'kept')[] = ['kept', 'exact', 'near', 'semantic'];

/** Every record's decision in typed arrays (13 bytes a record): the reason, the kept record it repeats, the similarity. */
class DecisionLog {
  private reasons = new Uint8Array(1024);
  private of = new Int32Array(1024);
  private similarities = new Float64Array(1024);
  size = 0;

  push(decision: Decision): void {
    if (this.size === this.reasons.length) {
      this.reasons = doubled(this.reasons);
      this.of = doubled(this.of);
      this.similarities = doubled(this.similarities);
    }
    this.reasons[this.size] = decision.kept ? 0 : REASONS.indexOf(decision.reason);
    this.of[this.size] = decision.kept ? -1 : decision.of;
    this.similarities[this.size] = decision.kept ? 0 : decision.similarity;
    this.size++;
  }

  get(position: number): Decision {
    const reason = REASONS[this.reasons[position]!]!;
    return reason === 'kept' ? { kept: true } : { kept: false, reason, of: this.of[position]!, similarity: this.similarities[position]! };
  }
}

/** A trajectory hash as a map key: its first 96 bits, 24 hex characters (a third of the full hash's memory). */
const hashKey = (record: EpisodeRecord): string => trajectoryHash(record).slice(0, 24);

/**
 * Semantic dedup's vectors, one per distinct trajectory, embedded in batches
 * as a first pass streams the records and kept on disk: nothing but the
 * batch being embedded is held in memory.
 */
async function embedDistinct(dir: string, embedder: Embedder, spill: SpillFile<Float64Array>, onProgress?: (message: string) => void): Promise<Map<string, number>> {
  const slotOf = new Map<string, number>();
  let batch: { key: string; text: string }[] = [];
  let dimensions: number | undefined;
  const flush = async () => {
    if (batch.length === 0) return;
    const vectors = await embedder.embed(batch.map((entry) => entry.text));
    if (vectors.length !== batch.length) {
      throw new FactoryError('usage', `${embedder.name} returned ${vectors.length} embeddings for ${batch.length} texts`, { fix: 'use an embedding model' });
    }
    for (const [index, vector] of vectors.entries()) {
      dimensions ??= vector.length;
      if (vector.length !== dimensions) throw new FactoryError('usage', `${embedder.name} returned vectors of ${dimensions} and ${vector.length} dimensions`, { fix: 'use one embedding model' });
      slotOf.set(batch[index]!.key, spill.append(Float64Array.from(vector)));
    }
    onProgress?.(`embedded ${slotOf.size} distinct episodes with ${embedder.name}`);
    batch = [];
  };
  const pending = new Set<string>();
  await passOverDataset(dir, 'deduplicated', async ({ record }) => {
    const key = hashKey(record);
    // An exact duplicate embeds identically: each distinct trajectory is embedded once.
    if (slotOf.has(key) || pending.has(key)) return;
    pending.add(key);
    batch.push({ key, text: episodeText(record) });
    if (batch.length >= DEFAULT_EMBED_BATCH) {
      await flush();
      pending.clear();
    }
  });
  await flush();
  return slotOf;
}

export async function dedupDataset(options: DedupOptions): Promise<DedupSummary> {
  const started = performance.now();
  const near = options.near === undefined ? DEFAULT_NEAR_THRESHOLD : options.near;
  if (near !== false) checkThreshold('the near-duplicate (Jaccard)', near, '--near');
  const cosine = options.cosine ?? DEFAULT_COSINE_THRESHOLD;
  if (options.cosine !== undefined && !options.embedder) {
    throw new FactoryError('usage', 'a cosine threshold was given without an embedder', { fix: 'add --embed ollama:<model> to turn on semantic dedup, or drop --cosine' });
  }
  if (options.embedder) checkThreshold('the semantic (cosine)', cosine, '--cosine');

  const sourceFile = assertDatasetDirectory(options.dir);
  const passProgress: PassOptions = options.onPass ? { onProgress: options.onPass } : {};
  checkOutputDirectory(options.dir, options.outDir);
  // Written beside the output and moved into place at the end, so a failed run never leaves a half-written dataset that looks finished.
  const createdOut = !existsSync(options.outDir);
  mkdirSync(options.outDir, { recursive: true });
  const partial = join(options.outDir, PARTIAL_DIRECTORY);
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial);
  // What must be compared again later (a kept record's shingles, an embedding) is kept on disk, not in memory.
  const shingleSpill = SpillFile.ofUint32(join(partial, 'shingles.bin'));
  const vectorSpill = SpillFile.ofFloat64(join(partial, 'vectors.bin'));
  let summary: { records: number; kept: number; byReason: Record<DuplicateReason, number>; nearSearch: NearSearch | null };
  try {
    // Dedup never skips a record silently: an unreadable line, or an id that holds two contents, stops it (at the end of the first pass, before anything is written).
    const vectorSlot = options.embedder ? await embedDistinct(options.dir, options.embedder, vectorSpill, options.onProgress) : new Map<string, number>();

    const nearSearch = near === false ? null : nearSearchFor(near);
    // A kept record's entry in the shingle file, by its position (4 bytes a record).
    let shingleSlots = new Int32Array(1024);
    // Each trajectory hash seen so far, with the kept record it stands for (itself, or what it was dropped for): a copy of a dropped line is still exact.
    const keptByHash = new Map<string, number>();
    // The kept records' vectors (their places in the vector file) and positions, for semantic dedup, which compares a record with every kept one.
    const keptVectors: number[] = [];
    const keptPositions: number[] = [];
    const decisions = new DecisionLog();
    let kept = 0;

    options.onStage?.('comparing');
    await passOverDataset(options.dir, 'deduplicated', ({ record }) => {
      const position = decisions.size;
      const hash = hashKey(record);
      const same = keptByHash.get(hash);
      if (same !== undefined) {
        decisions.push({ kept: false, reason: 'exact', of: same, similarity: 1 });
        return;
      }
      let match: Extract<Decision, { kept: false }> | undefined;
      let shingles: Uint32Array | undefined;
      let signature: Uint32Array | undefined;
      if (nearSearch) {
        shingles = recordShingles(record);
        signature = nearSearch.hasher.signature(shingles);
        // Candidates come in file order and only a strictly better score replaces a match, so ties go to the earliest record.
        for (const candidate of nearSearch.index.candidates(signature, NEAR_BUCKET_LIMIT)) {
          const similarity = exactJaccard(shingles, shingleSpill.read(shingleSlots[candidate]!));
          if (similarity >= nearSearch.threshold && (!match || similarity > match.similarity)) match = { kept: false, reason: 'near', of: candidate, similarity };
        }
      }
      if (!match && options.embedder) {
        const vector = Array.from(vectorSpill.read(vectorSlot.get(hash)!));
        for (const [index, slot] of keptVectors.entries()) {
          const similarity = cosineSimilarity(vector, Array.from(vectorSpill.read(slot)));
          if (similarity >= cosine && (!match || similarity > match.similarity)) match = { kept: false, reason: 'semantic', of: keptPositions[index]!, similarity };
        }
      }
      if (match) {
        decisions.push(match);
        keptByHash.set(hash, match.of);
        return;
      }
      decisions.push({ kept: true });
      kept++;
      keptByHash.set(hash, position);
      if (options.embedder) {
        keptVectors.push(vectorSlot.get(hash)!);
        keptPositions.push(position);
      }
      if (nearSearch && shingles && signature) {
        nearSearch.index.add(position, signature);
        while (position >= shingleSlots.length) shingleSlots = doubled(shingleSlots);
        shingleSlots[position] = shingleSpill.append(shingles);
      }
    }, passProgress);
    const records = decisions.size;
    const byReason: Record<DuplicateReason, number> = { exact: 0, near: 0, semantic: 0 };
    // Which kept records a dropped one names: only their ids are remembered in the second pass.
    const named = new Uint8Array(records);
    for (let position = 0; position < records; position++) {
      const decision = decisions.get(position);
      if (decision.kept) continue;
      byReason[decision.reason]++;
      named[decision.of] = 1;
    }

    const episodes = new JsonlAppender(join(partial, EPISODES_FILE));
    const dropped = new JsonlAppender(join(partial, DROPPED_FILE));
    const idOf = new Map<number, string>();
    let position = 0;
    try {
      options.onStage?.('writing');
      await passOverDataset(options.dir, 'deduplicated', ({ record, text }) => {
        if (position >= records) throw new FactoryError('dataset_corrupt', `${sourceFile} grew while dedup read it`, { fix: 'run dedup again on a dataset no other process is writing' });
        const decision = decisions.get(position);
        if (decision.kept) {
          episodes.append(deriveRecord(record, DEDUP_OPERATION));
          if (named[position] === 1) idOf.set(position, record.record_id);
        } else {
          dropped.append(null, droppedLine(record, decision, idOf.get(decision.of)!, text));
        }
        position++;
      }, passProgress);
      if (position !== records) throw new FactoryError('dataset_corrupt', `${sourceFile} changed while dedup read it (${position} records, then ${records})`, { fix: 'run dedup again on a dataset no other process is writing' });
    } finally {
      episodes.close({ sync: true });
      dropped.close({ sync: true });
    }

    // Past the size bound, the kept records are cut into data/ files, as generate cuts a run's.
    const written = layOutJsonl(partial, options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES);
    const report: DedupReport = {
      format: DEDUP_REPORT_FORMAT,
      operation: DEDUP_OPERATION,
      source: await Promise.all(recordFiles(options.dir).jsonl.map((file) => describeFile(options.dir, join(options.dir, file)))),
      near: nearSearch
        ? { threshold: nearSearch.threshold, permutations: MINHASH_PERMUTATIONS, shingle_size: SHINGLE_SIZE, bands: nearSearch.banding.bands, rows: nearSearch.banding.rows }
        : null,
      semantic: options.embedder ? { embedder: options.embedder.name, digest: options.embedder.digest ?? null, cosine_threshold: cosine } : null,
      counts: { records, kept, dropped: records - kept, by_reason: byReason },
      files: [await describeFile(partial, join(partial, DROPPED_FILE)), ...(await Promise.all(written.map((file) => describeFile(partial, join(partial, file)))))],
    };
    writeFileSync(join(partial, DEDUP_REPORT_FILE), JSON.stringify(report, null, 2) + '\n');
    // An earlier dedup's output may have been laid out in data/ files: they go first, or the directory would hold two layouts.
    for (const stale of presentRecordFiles(options.outDir)) rmSync(join(options.outDir, stale), { force: true });
    if (written.length > 1) mkdirSync(join(options.outDir, DATA_DIRECTORY), { recursive: true });
    for (const file of [...written, DROPPED_FILE, DEDUP_REPORT_FILE]) renameSync(join(partial, file), join(options.outDir, file));
    shingleSpill.remove();
    vectorSpill.remove();
    rmSync(partial, { recursive: true, force: true });
    summary = { records, kept, byReason, nearSearch };
  } catch (error) {
    shingleSpill.remove();
    vectorSpill.remove();
    rmSync(partial, { recursive: true, force: true });
    if (createdOut && readdirSync(options.outDir).length === 0) rmSync(options.outDir, { recursive: true, force: true });
    throw error;
  }
  const { records, kept, byReason, nearSearch } = summary;

  return {
    dir: options.dir,
    out_dir: options.outDir,
    records,
    kept,
    dropped: records - kept,
    by_reason: byReason,
    near_threshold: nearSearch ? nearSearch.threshold : null,
    near_banding: nearSearch ? { bands: nearSearch.banding.bands, rows: nearSearch.banding.rows } : null,
    ...(options.embedder
      ? {
          cosine_threshold: cosine,
          embed_model: options.embedder.name,
          ...(options.embedder.digest !== undefined ? { embed_model_digest: options.embedder.digest } : {}),
        }
      : {}),
    wall_seconds: (performance.now() - started) / 1000,
  };
}
