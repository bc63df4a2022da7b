// Owns reading a dataset directory for the dataset operations, in bounded
// memory: every line of its records (episodes.jsonl, or the data/ files of a
// big dataset, in order: records/record-files) decoded as strict UTF-8, parsed within
// the nesting limit and checked against the record schema, and every
// record_id checked against the lines before it, with each torn, corrupt or
// invalid line, and each id that comes back with other bytes, reported by
// file and line number instead of skipped or passed on. A dataset is streamed
// one record at a time (`passOverDataset`): the memory an operation needs
// does not grow with the file, except for what the operation itself keeps.
// A record is found again by where its line is (`readRowAt`), not kept.

import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { MAX_RECORD_DEPTH, parseBoundedJson } from '../core/bounded-json.js';
import { FactoryError } from '../core/errors.js';
import { FingerprintTable } from '../core/fingerprint-table.js';
import { sha256Hex } from '../core/hashing.js';
import { doubled } from '../core/typed-arrays.js';
import type { EpisodeRecord } from '../records/episode-record.js';
import { jsonLineProblem, lineProblem, readLines } from '../records/jsonl.js';
import { DATA_DIRECTORY, EPISODES_FILE, expandRecordPath, recordFiles } from '../records/record-files.js';
import { validateAgainst } from '../records/schema-registry.js';

export { EPISODES_FILE };

export interface DatasetRow {
  /** The file the line is in, relative to the dataset directory (one of its record files). */
  file: string;
  line: number;
  record: EpisodeRecord;
  /** The exact bytes of the line. */
  text: string;
  /** Where the line is in its file, in bytes (its newline not counted): what `readRowAt` takes. */
  offset: number;
  bytes: number;
  /** Set when an earlier line holds the same record, byte for byte: that line's number. */
  repeatOf?: number;
}

export interface DatasetProblem {
  file: string;
  line: number;
  reason: string;
  /**
   * Set when the line is a valid record whose record_id an earlier line holds
   * with other bytes: one of the two was altered (or two datasets were mixed),
   * which is tampering, not damage.
   */
  conflict?: { record_id: string; line: number };
}

export interface Dataset {
  dir: string;
  file: string;
  rows: DatasetRow[];
  problems: DatasetProblem[];
}

/**
 * Where a dataset's records are, as a path to name in messages: its
 * episodes.jsonl, or its data/ directory. `file` names another JSONL file of
 * the directory (a split's) instead; EPISODES_FILE stands for the records in
 * either layout. Throws when there is none, or the layout is broken.
 */
export function assertDatasetDirectory(dir: string, file = EPISODES_FILE): string {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new FactoryError('dataset_not_found', `${dir} is not a directory`, { fix: 'pass a directory written by `episode-factory generate`, e.g. datasets/tool-world-v1' });
  }
  if (file === EPISODES_FILE) return join(dir, recordFiles(dir).layout === 'single' ? EPISODES_FILE : DATA_DIRECTORY);
  // A big split's glob (splits/train-*.jsonl): its files must make a whole numbered set.
  if (file.includes('*')) return join(dir, expandRecordPath(dir, file)[0]!);
  const path = join(dir, file);
  if (!existsSync(path)) {
    throw new FactoryError('dataset_not_found', `${dir} has no ${file}`, { fix: `run \`episode-factory generate <lane> --out ${dir}\` first` });
  }
  return path;
}

/** The JSONL files a pass reads, in order: the dataset's record files (either layout) for EPISODES_FILE, a big split's files for its glob, else the one file named. */
export function passFiles(dir: string, file = EPISODES_FILE): string[] {
  assertDatasetDirectory(dir, file);
  return file === EPISODES_FILE ? recordFiles(dir).jsonl : expandRecordPath(dir, file);
}

export type DatasetEntry = { row: DatasetRow; problem?: never } | { problem: DatasetProblem; row?: never };

/** Where a record's line is: its file (relative to the dataset directory) and its place in it. */
export interface RecordPlace {
  file: string;
  line: number;
  offset: number;
  bytes: number;
}

/**
 * Places of lines, numbered in the order added, in typed arrays (18 bytes a
 * line): what an operation keeps instead of the records themselves when it
 * must come back to them (DPO's groups, an audit's sample).
 */
export class RecordPlaces {
  /** The few file names places are in, each kept once. */
  private readonly fileNames: string[] = [];
  private readonly fileIndex = new Map<string, number>();
  private files = new Uint16Array(1024);
  private lines = new Int32Array(1024);
  private offsets = new Float64Array(1024);
  private lengths = new Int32Array(1024);
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(place: RecordPlace): number {
    if (this.count === this.lines.length) {
      this.files = doubled(this.files);
      this.lines = doubled(this.lines);
      this.offsets = doubled(this.offsets);
      this.lengths = doubled(this.lengths);
    }
    let fileIndex = this.fileIndex.get(place.file);
    if (fileIndex === undefined) {
      fileIndex = this.fileNames.push(place.file) - 1;
      this.fileIndex.set(place.file, fileIndex);
    }
    this.files[this.count] = fileIndex;
    this.lines[this.count] = place.line;
    this.offsets[this.count] = place.offset;
    this.lengths[this.count] = place.bytes;
    return this.count++;
  }

  get(index: number): RecordPlace {
    return { file: this.fileNames[this.files[index]!]!, line: this.lines[index]!, offset: this.offsets[index]!, bytes: this.lengths[index]! };
  }
}

/**
 * Where each record_id was first seen, in about 40 bytes a record: the id is
 * known by a 64-bit fingerprint (core/fingerprint-table) beside the place of
 * its line, and never kept. A fingerprint found is confirmed by reading the
 * head of that line back from the file (`{"record_id":"<id>",`, where every
 * record written by this tool starts), so two ids that share a fingerprint,
 * or a line whose head is not its id, are told apart exactly: those few are
 * kept whole in a Map. When an id comes again, the caller reads the earlier
 * line back to tell an exact repeat from other bytes: no hash of the line is
 * kept, so none can be matched by an altered line. A pass can be given one to
 * ask, once it has read every line, whether an id is anywhere in the file.
 * (A Map of id strings spent about 140 bytes a record: 35 MB at 250,000.)
 */
export class RecordIdIndex {
  private readonly fingerprints = new FingerprintTable();
  private readonly places = new RecordPlaces();
  /** Ids a fingerprint cannot vouch for: another id has its fingerprint, or its line does not start with it. */
  private readonly exact = new Map<string, number>();

  /** `dir` is the dataset directory the places are in: where a line's head is read back. */
  constructor(private readonly dir: string) {}

  get(id: string): RecordPlace | undefined {
    return this.find(id, sha256Hex(id));
  }

  /** `text` is the line: a fingerprint stands for the id only where the line starts with it. */
  add(id: string, place: RecordPlace, text: string): void {
    this.insert(id, sha256Hex(id), place, text);
  }

  /** Where the id was first seen; when it was not, this line is where, and undefined comes back. One hash for both (a pass asks this of every record). */
  claim(id: string, place: RecordPlace, text: string): RecordPlace | undefined {
    const fingerprint = sha256Hex(id);
    const earlier = this.find(id, fingerprint);
    if (earlier === undefined) this.insert(id, fingerprint, place, text);
    return earlier;
  }

  private find(id: string, fingerprint: string): RecordPlace | undefined {
    const slot = this.fingerprints.get(fingerprint);
    if (slot !== undefined) {
      const place = this.places.get(slot);
      const head = Buffer.from(lineHead(id), 'utf8');
      if (place.bytes >= head.length && readLineAt(join(this.dir, place.file), place.offset, head.length).equals(head)) return place;
    }
    const kept = this.exact.get(id);
    return kept === undefined ? undefined : this.places.get(kept);
  }

  private insert(id: string, fingerprint: string, place: RecordPlace, text: string): void {
    const slot = this.places.add(place);
    if (text.startsWith(lineHead(id)) && this.fingerprints.getOrAdd(fingerprint, slot) === undefined) return;
    this.exact.set(id, slot);
  }

  has(id: string): boolean {
    return this.get(id) !== undefined;
  }
}

/** How a record written by this tool starts: its record_id, the first key. */
function lineHead(id: string): string {
  return `{"record_id":${JSON.stringify(id)},`;
}

/** The bytes of one line of a file, by its place (from a DatasetRow or a JsonlLine). */
export function readLineAt(path: string, offset: number, bytes: number): Buffer {
  const buffer = Buffer.alloc(bytes);
  const fd = openSync(path, 'r');
  try {
    let read = 0;
    while (read < bytes) {
      const got = readSync(fd, buffer, read, bytes - read, offset + read);
      if (got === 0) throw new FactoryError('dataset_corrupt', `${path} ended before byte ${offset + bytes}: it changed while it was read`, { fix: 'run the command again on a dataset no other process is writing' });
      read += got;
    }
  } finally {
    closeSync(fd);
  }
  return buffer;
}

/**
 * A record read again by its place, for an operation that passed over the
 * dataset once already and kept only where each record is (DPO's groups).
 * The line must be the one the first pass read: a file that changed in
 * between is an error, not a different record.
 */
export function readRowAt(dir: string, place: RecordPlace): DatasetRow {
  const path = join(dir, place.file);
  const text = readLineAt(path, place.offset, place.bytes).toString('utf8');
  let record: EpisodeRecord;
  try {
    record = JSON.parse(text) as EpisodeRecord;
  } catch {
    throw new FactoryError('dataset_corrupt', `${path}:${place.line} changed while it was read (it is no longer the record read before)`, { fix: 'run the command again on a dataset no other process is writing' });
  }
  return { file: place.file, line: place.line, record, text, offset: place.offset, bytes: place.bytes };
}

/**
 * Every line of the records in order (each record file in turn, for a big
 * dataset), each either a valid record or a problem, without holding a file.
 * Only each record_id's place is kept, to tell a repeated record from an
 * altered one.
 */
export async function* streamDataset(dir: string, file = EPISODES_FILE, seen = new RecordIdIndex(dir)): AsyncGenerator<DatasetEntry> {
  for (const name of passFiles(dir, file)) yield* streamFile(dir, name, seen);
}

async function* streamFile(dir: string, file: string, seen: RecordIdIndex): AsyncGenerator<DatasetEntry> {
  const path = join(dir, file);
  for await (const entry of readLines(path)) {
    const problem = (reason: string): DatasetEntry => ({ problem: { file, line: entry.line, reason } });
    const unreadable = lineProblem(entry);
    if (unreadable !== undefined) {
      yield problem(unreadable);
      continue;
    }
    let value: unknown;
    try {
      value = parseBoundedJson(entry.text, { maxDepth: MAX_RECORD_DEPTH, where: 'the line' });
    } catch (error) {
      yield problem(jsonLineProblem(error));
      continue;
    }
    const errors = validateAgainst('episode-record.v1', value);
    if (errors.length > 0) {
      yield problem(`not a valid record: ${errors.slice(0, 3).map((error) => `${error.path || '/'}: ${error.reason}`).join('; ')}`);
      continue;
    }
    const record = value as EpisodeRecord;
    const row: DatasetRow = { file, line: entry.line, record, text: entry.text, offset: entry.offset, bytes: entry.bytes };
    const earlier = seen.claim(record.record_id, { file, line: entry.line, offset: entry.offset, bytes: entry.bytes }, entry.text);
    if (earlier === undefined) {
      yield { row };
      continue;
    }
    const where = earlier.file === file ? `line ${earlier.line}` : `${earlier.file}:${earlier.line}`;
    // The same bytes again are an exact duplicate (dedup's to drop); other bytes under the same id are not.
    if (earlier.bytes === entry.bytes && readLineAt(join(dir, earlier.file), earlier.offset, earlier.bytes).toString('utf8') === entry.text) {
      yield { row: { ...row, repeatOf: earlier.line } };
    } else {
      yield {
        problem: {
          file,
          line: entry.line,
          reason: `record_id ${record.record_id} is also on ${where} with different content: one of them was altered, or two datasets were mixed`,
          conflict: { record_id: record.record_id, line: earlier.line },
        },
      };
    }
  }
}

/** Problems listed in an error or a report at most; the rest are counted. */
export const MAX_LISTED_PROBLEMS = 100;

export interface DatasetPass {
  /** Valid records visited. */
  records: number;
  /** Problems, the first MAX_LISTED_PROBLEMS of them (`problemCount` counts all). */
  problems: DatasetProblem[];
  problemCount: number;
  /** Of those, ids that came back with other bytes (tampering, not damage). */
  conflictCount: number;
}

export interface PassOptions {
  file?: string;
  /** The index of record ids the pass fills, for a caller that asks about ids after it. */
  ids?: RecordIdIndex;
  /** Called now and then with the bytes read so far and the file's size. */
  onProgress?: (done: { records: number; bytes: number; totalBytes: number }) => void;
}

/**
 * The one way a dataset operation reads records: one pass in file order, one
 * record at a time, handed to `visit`. The memory is the visitor's own state
 * and one record. Problems are collected (the first 100 listed, all
 * counted); `passOverDataset` refuses them at the end (the operation's
 * outputs must be staged and only moved into place after it returns), while
 * `scanDataset` hands them back for the caller to report.
 */
export async function scanDataset(dir: string, visit: (row: DatasetRow) => void | Promise<void>, options: PassOptions = {}): Promise<DatasetPass> {
  const files = passFiles(dir, options.file ?? EPISODES_FILE);
  const sizes = files.map((name) => statSync(join(dir, name)).size);
  const totalBytes = sizes.reduce((sum, size) => sum + size, 0);
  // The bytes of the files before each one: progress counts over all of them.
  const before = new Map(files.map((name, index) => [name, sizes.slice(0, index).reduce((sum, size) => sum + size, 0)]));
  const pass: DatasetPass = { records: 0, problems: [], problemCount: 0, conflictCount: 0 };
  let reported = 0;
  for await (const entry of streamDataset(dir, options.file ?? EPISODES_FILE, options.ids)) {
    if (entry.problem) {
      pass.problemCount++;
      if (entry.problem.conflict) pass.conflictCount++;
      if (pass.problems.length < MAX_LISTED_PROBLEMS) pass.problems.push(entry.problem);
      continue;
    }
    pass.records++;
    const result = visit(entry.row);
    if (result) await result;
    if (options.onProgress && pass.records - reported >= 1000) {
      reported = pass.records;
      options.onProgress({ records: pass.records, bytes: before.get(entry.row.file)! + entry.row.offset + entry.row.bytes, totalBytes });
    }
  }
  options.onProgress?.({ records: pass.records, bytes: totalBytes, totalBytes });
  return pass;
}

/** For operations that must not work on part of a dataset: every unreadable or conflicting line stops them, at the end of the pass. */
export async function passOverDataset(dir: string, operation: string, visit: (row: DatasetRow) => void | Promise<void>, options: PassOptions = {}): Promise<number> {
  const pass = await scanDataset(dir, visit, options);
  if (pass.problemCount > 0) throw datasetProblemsError(dir, pass.problems, operation, pass.problemCount, pass.conflictCount);
  return pass.records;
}

/** Every record of a small dataset, held in memory (tests, fixtures); the dataset commands stream instead. */
export async function readDataset(dir: string, file = EPISODES_FILE): Promise<Dataset> {
  const result: Dataset = { dir, file, rows: [], problems: [] };
  for await (const entry of streamDataset(dir, file)) {
    if (entry.row) result.rows.push(entry.row);
    else result.problems.push(entry.problem);
  }
  return result;
}

/**
 * The error that stops an operation on a dataset with problems: tampering
 * (a record_id with two contents) is a failed check, exit 1; unreadable lines
 * are a precondition, exit 2. Every problem is listed.
 */
export function datasetProblemsError(dir: string, problems: readonly DatasetProblem[], operation: string, count = problems.length, conflicts = problems.filter((problem) => problem.conflict !== undefined).length): FactoryError {
  const listed = problems.map((problem) => ({ where: `${join(dir, problem.file)}:${problem.line}`, reason: problem.reason }));
  if (count > problems.length) listed.push({ where: dir, reason: `and ${count - problems.length} more lines like these, not listed` });
  if (conflicts > 0) {
    return new FactoryError('dataset_tampered', `${dir} has ${conflicts} record_id${conflicts === 1 ? '' : 's'} whose lines differ from an earlier line with the same id; nothing was ${operation}`, {
      fix: 'run `episode-factory audit` on it, then regenerate the dataset (or restore it from the run that wrote it)',
      problems: listed,
    });
  }
  return new FactoryError('dataset_corrupt', `${dir} has ${count} unreadable line${count === 1 ? '' : 's'}; nothing was ${operation}`, {
    fix: 'run `episode-factory audit` on it, then regenerate or repair the listed lines',
    problems: listed,
  });
}

export function formatProblem(problem: DatasetProblem): string {
  return `${problem.file}:${problem.line}: ${problem.reason}`;
}
