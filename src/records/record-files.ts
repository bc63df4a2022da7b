// Owns where a dataset's records are on disk, its two layouts: one
// episodes.jsonl (with episodes.arrow and episodes.parquet beside it), or,
// once the records pass a size bound, files named the way the Hugging Face
// Hub expects, data/train-00000-of-00004.jsonl (.arrow, .parquet), each
// holding a run of records in order. Every reader asks here for the files
// and gets them in record order, whatever the layout; a layout with a file
// missing, a stray file or two disagreeing counts is refused by name, never
// read as a shorter dataset. A side of `split` past the bound is named the
// same way under splits/ (splits/test-00000-of-00002.jsonl).

import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, readSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { join, posix } from 'node:path';
import { FactoryError } from '../core/errors.js';

export const EPISODES_FILE = 'episodes.jsonl';
export const DATA_DIRECTORY = 'data';
/** The Hub's default split name: the records of a dataset before any `split`. */
export const DATA_SPLIT = 'train';
/** Records beyond this many bytes of JSONL are written as several files; each file (but a lone record's) stays within it. */
export const DEFAULT_MAX_FILE_BYTES = 500 * 1024 * 1024;

export const RECORD_FORMATS = ['jsonl', 'arrow', 'parquet'] as const;
export type RecordFormat = (typeof RECORD_FORMATS)[number];

/** The single-file name of each format. */
const SINGLE_FILES: Record<RecordFormat, string> = { jsonl: EPISODES_FILE, arrow: 'episodes.arrow', parquet: 'episodes.parquet' };

/** The JSONL files of the data/ layout as a loader's glob (a card's data_files, DuckDB's read_json). */
export const DATA_FILES_GLOB = `${DATA_DIRECTORY}/${DATA_SPLIT}-*.jsonl`;

/** `<directory>/<split>-00001-of-00004.<extension>`: file `index` of `count`, as the Hub numbers a split's files. */
function numberedName(directory: string, split: string, index: number, count: number, extension: string): string {
  const digits = (value: number) => String(value).padStart(5, '0');
  return posix.join(directory, `${split}-${digits(index)}-of-${digits(count)}.${extension}`);
}

/** The path (relative to the dataset directory) of file `index` of `count` in `format`: data/train-00001-of-00004.parquet. */
export function dataFileName(index: number, count: number, format: RecordFormat): string {
  return numberedName(DATA_DIRECTORY, DATA_SPLIT, index, count, format);
}

const DATA_FILE_PATTERN = /^train-(\d{5})-of-(\d{5})\.(jsonl|arrow|parquet)$/;

/** A dataset's record files, each format's in record order (empty when the dataset has no copy in that format). */
export interface RecordFiles {
  layout: 'single' | 'data-files';
  jsonl: string[];
  arrow: string[];
  parquet: string[];
}

function layoutError(dir: string, reason: string): FactoryError {
  return new FactoryError('dataset_corrupt', `${dir}: ${reason}`, {
    fix: 'restore the dataset from the run that wrote it (its manifest.json lists every file and its hash), or generate it again',
  });
}

/** The names under data/ that follow the pattern, by format, with any name there that does not. */
function dataDirectoryNames(dir: string): { byFormat: Map<RecordFormat, { index: number; count: number; name: string }[]>; strays: string[] } {
  const byFormat = new Map<RecordFormat, { index: number; count: number; name: string }[]>();
  const strays: string[] = [];
  const path = join(dir, DATA_DIRECTORY);
  if (!existsSync(path) || !statSync(path).isDirectory()) return { byFormat, strays };
  for (const name of readdirSync(path).sort()) {
    const match = DATA_FILE_PATTERN.exec(name);
    if (!match) {
      strays.push(posix.join(DATA_DIRECTORY, name));
      continue;
    }
    const format = match[3] as RecordFormat;
    const list = byFormat.get(format) ?? [];
    list.push({ index: Number(match[1]), count: Number(match[2]), name: posix.join(DATA_DIRECTORY, name) });
    byFormat.set(format, list);
  }
  return { byFormat, strays };
}

/**
 * The files that hold a dataset's records. A directory with neither layout is
 * `dataset_not_found`; one with both, or with data files that do not make one
 * whole numbered set (a file missing, an extra one, counts that disagree
 * between files or formats), is `dataset_corrupt`, naming the file.
 */
export function recordFiles(dir: string): RecordFiles {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new FactoryError('dataset_not_found', `${dir} is not a directory`, { fix: 'pass a directory written by `episode-factory generate`, e.g. datasets/tool-world-v1' });
  }
  const { byFormat, strays } = dataDirectoryNames(dir);
  const single = existsSync(join(dir, EPISODES_FILE));
  if (byFormat.size === 0) {
    if (!single) throw new FactoryError('dataset_not_found', `${dir} has no ${EPISODES_FILE} and no ${DATA_DIRECTORY}/${DATA_SPLIT}-*-of-*.jsonl files`, { fix: `run \`episode-factory generate <lane> --out ${dir}\` first` });
    const present = (format: RecordFormat) => (existsSync(join(dir, SINGLE_FILES[format])) ? [SINGLE_FILES[format]] : []);
    return { layout: 'single', jsonl: [EPISODES_FILE], arrow: present('arrow'), parquet: present('parquet') };
  }
  if (single) throw layoutError(dir, `holds both ${EPISODES_FILE} and record files under ${DATA_DIRECTORY}/: one of the two layouts is left over from another run`);
  if (strays.length > 0) throw layoutError(dir, `${strays[0]} is not a record file (names under ${DATA_DIRECTORY}/ are ${DATA_SPLIT}-NNNNN-of-NNNNN.jsonl, .arrow or .parquet)`);
  const jsonl = byFormat.get('jsonl');
  if (!jsonl) throw layoutError(dir, `${DATA_DIRECTORY}/ holds Arrow or Parquet record files but no JSONL ones, which the others are copies of`);
  const count = jsonl[0]!.count;
  const files: RecordFiles = { layout: 'data-files', jsonl: [], arrow: [], parquet: [] };
  for (const format of RECORD_FORMATS) {
    const found = byFormat.get(format);
    if (!found) continue;
    const names = new Set(found.map((entry) => entry.name));
    for (const entry of found) {
      if (entry.count !== count || entry.index >= count) throw layoutError(dir, `${entry.name} does not belong with ${jsonl[0]!.name}: the records are in ${count} files`);
    }
    for (let index = 0; index < count; index++) {
      const name = dataFileName(index, count, format);
      if (!names.has(name)) throw layoutError(dir, `${name} is missing: the records are in ${count} files and each must be there`);
      files[format].push(name);
    }
  }
  return files;
}

/** The bytes of a dataset's JSONL records, over every file. */
export function recordBytes(dir: string, files: readonly string[] = recordFiles(dir).jsonl): number {
  return files.reduce((sum, file) => sum + statSync(join(dir, file)).size, 0);
}

/**
 * Cuts records into files by their sizes: a file is closed before the record
 * that would take it past `maxBytes` (a record larger than the bound still
 * gets a file of its own). The cut depends on the records' bytes alone, so
 * the layout is the same whatever threads or parts wrote them.
 */
export class FileCutter {
  private filled = 0;
  private rows = 0;
  /** Rows in each file closed so far. */
  readonly closedRows: number[] = [];

  constructor(private readonly maxBytes: number) {}

  /** Takes the next record's size (its line and newline); true when it starts a new file. */
  take(bytes: number): boolean {
    const starts = this.rows > 0 && this.filled + bytes > this.maxBytes;
    if (starts) {
      this.closedRows.push(this.rows);
      this.filled = 0;
      this.rows = 0;
    }
    this.filled += bytes;
    this.rows++;
    return starts;
  }

  /** Rows in each file, the open one included. */
  fileRows(): number[] {
    return this.rows > 0 || this.closedRows.length === 0 ? [...this.closedRows, this.rows] : [...this.closedRows];
  }
}

/** The staged name of record file `index` in `format`, before the count is known. */
export function stagedRecordFile(staging: string, index: number, format: RecordFormat): string {
  return join(staging, `records-${String(index).padStart(5, '0')}.${format}`);
}

/** The staged Arrow and Parquet copies of record file `index`, for the formats `wanted` (what writeColumnar takes). */
export function stagedCopies(staging: string, index: number, wanted: (format: 'arrow' | 'parquet') => boolean): { arrow?: string; parquet?: string } {
  return {
    ...(wanted('arrow') ? { arrow: stagedRecordFile(staging, index, 'arrow') } : {}),
    ...(wanted('parquet') ? { parquet: stagedRecordFile(staging, index, 'parquet') } : {}),
  };
}

/**
 * Copies JSONL files' lines, in order, into record files cut by FileCutter
 * (file `n` at `pathFor(n)`), each flushed to disk, reading a megabyte at a
 * time (a line is held whole only while it is cut). Returns the rows of each
 * file; no lines still make one (empty) file.
 */
export function writeRecordFiles(sources: readonly string[], pathFor: (file: number) => string, maxBytes: number): number[] {
  const cutter = new FileCutter(maxBytes);
  let file = 0;
  let fd = openSync(pathFor(file), 'w');
  const writeAll = (bytes: Uint8Array) => {
    let offset = 0;
    while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
  };
  /** Writes whole lines of `bytes`, cutting files between them. */
  const writeLines = (bytes: Buffer) => {
    let start = 0;
    let lineStart = 0;
    while (lineStart < bytes.length) {
      const newline = bytes.indexOf(0x0a, lineStart);
      const lineEnd = newline < 0 ? bytes.length : newline + 1;
      if (cutter.take(lineEnd - lineStart)) {
        writeAll(bytes.subarray(start, lineStart));
        fsyncSync(fd);
        closeSync(fd);
        fd = openSync(pathFor(++file), 'w');
        start = lineStart;
      }
      lineStart = lineEnd;
    }
    writeAll(bytes.subarray(start));
  };
  const chunk = Buffer.allocUnsafe(1 << 20);
  try {
    for (const source of sources) {
      const input = openSync(source, 'r');
      let carried = Buffer.alloc(0);
      try {
        let read: number;
        while ((read = readSync(input, chunk, 0, chunk.length, null)) > 0) {
          const bytes = carried.length > 0 ? Buffer.concat([carried, chunk.subarray(0, read)]) : chunk.subarray(0, read);
          const last = bytes.lastIndexOf(0x0a);
          writeLines(bytes.subarray(0, last + 1));
          // The part of a line the chunk ended in waits for the rest (copied: the chunk is reused).
          carried = Buffer.from(bytes.subarray(last + 1));
        }
      } finally {
        closeSync(input);
      }
      if (carried.length > 0) writeLines(carried);
    }
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return cutter.fileRows();
}

/**
 * Gives the staged record files their names in the dataset: episodes.jsonl
 * (.arrow, .parquet) for one file, data/train-NNNNN-of-NNNNN.* for several.
 * Returns the names, relative to `staging`, JSONL first. With `jsonlInPlace`,
 * one file's JSONL is episodes.jsonl already (and listed first).
 */
export function nameRecordFiles(staging: string, count: number, formats: readonly RecordFormat[], options: { jsonlInPlace?: boolean } = {}): string[] {
  const names: string[] = options.jsonlInPlace ? [EPISODES_FILE] : [];
  if (count > 1) mkdirSync(join(staging, DATA_DIRECTORY), { recursive: true });
  for (const format of RECORD_FORMATS) {
    if (!formats.includes(format)) continue;
    for (let index = 0; index < count; index++) {
      const name = count === 1 ? SINGLE_FILES[format] : dataFileName(index, count, format);
      renameSync(stagedRecordFile(staging, index, format), join(staging, name));
      names.push(name);
    }
  }
  return names;
}

/** True for a path a record layout may hold: a single-layout file or a data file. */
export function isRecordFilePath(path: string): boolean {
  if (Object.values(SINGLE_FILES).includes(path)) return true;
  const [directory, name, ...rest] = path.split('/');
  return directory === DATA_DIRECTORY && rest.length === 0 && name !== undefined && DATA_FILE_PATTERN.test(name);
}

/** Every file of `dir` a record layout may hold (either layout, whole or not): what a command replacing the records removes first. */
export function presentRecordFiles(dir: string): string[] {
  const present = Object.values(SINGLE_FILES).filter((name) => existsSync(join(dir, name)));
  const data = join(dir, DATA_DIRECTORY);
  if (existsSync(data) && statSync(data).isDirectory()) {
    for (const name of readdirSync(data).sort()) if (DATA_FILE_PATTERN.test(name)) present.push(posix.join(DATA_DIRECTORY, name));
  }
  return present;
}

/**
 * Cuts `dir`/episodes.jsonl into data/train-NNNNN-of-NNNNN.jsonl files when
 * it is past `maxBytes` (and removes it); leaves it as it is otherwise, and
 * a directory laid out in data/ files already as it is.
 * Returns the JSONL record files, relative to `dir`.
 */
export function layOutJsonl(dir: string, maxBytes: number): string[] {
  const source = join(dir, EPISODES_FILE);
  if (!existsSync(source)) return recordFiles(dir).jsonl;
  if (statSync(source).size <= maxBytes) return [EPISODES_FILE];
  const rows = writeRecordFiles([source], (file) => stagedRecordFile(dir, file, 'jsonl'), maxBytes);
  rmSync(source);
  return nameRecordFiles(dir, rows.length, ['jsonl']);
}

/** The name a columnar copy of a JSONL record file has: episodes.arrow beside episodes.jsonl, data/train-00001-of-00004.parquet beside its JSONL. */
export function copyName(jsonlFile: string, format: RecordFormat): string {
  return jsonlFile === EPISODES_FILE ? SINGLE_FILES[format] : jsonlFile.replace(/\.jsonl$/, `.${format}`);
}

/** Where `split` writes a split past the size bound: splits/train-00000-of-00009.jsonl, splits/test-00000-of-00001.jsonl. */
export const SPLITS_DIRECTORY = 'splits';

/** The path of file `index` of `count` of a split's records: splits/test-00000-of-00002.jsonl. */
export function splitFileName(split: string, index: number, count: number): string {
  return numberedName(SPLITS_DIRECTORY, split, index, count, 'jsonl');
}

/** The loader's glob for a split's files (what split.json and the card's configs name): splits/train-*.jsonl. */
export function splitGlob(split: string): string {
  return posix.join(SPLITS_DIRECTORY, `${split}-*.jsonl`);
}

const SPLIT_GLOB_PATTERN = /^splits\/([A-Za-z0-9_.]+)-\*\.jsonl$/;

/**
 * The files a record path names, in order: the path itself, or for a split's
 * glob (splits/train-*.jsonl) its numbered files, which must make one whole
 * set (refused by name otherwise, as recordFiles refuses a broken data/).
 */
export function expandRecordPath(dir: string, path: string): string[] {
  const match = SPLIT_GLOB_PATTERN.exec(path);
  if (!match) return [path];
  const split = match[1]!;
  const directory = join(dir, SPLITS_DIRECTORY);
  const pattern = new RegExp(`^${split.replace(/\./g, '\\.')}-(\\d{5})-of-(\\d{5})\\.jsonl$`);
  const found = existsSync(directory) ? readdirSync(directory).filter((name) => pattern.test(name)).sort() : [];
  if (found.length === 0) throw layoutError(dir, `${path} matches no file`);
  const count = Number(pattern.exec(found[0]!)![2]);
  const names = new Set(found.map((name) => posix.join(SPLITS_DIRECTORY, name)));
  const files = Array.from({ length: count }, (_, index) => splitFileName(split, index, count));
  for (const name of names) if (!files.includes(name)) throw layoutError(dir, `${name} does not belong with ${found[0]}: the ${split} split is in ${count} files`);
  for (const file of files) if (!names.has(file)) throw layoutError(dir, `${file} is missing: the ${split} split is in ${count} files and each must be there`);
  return files;
}
