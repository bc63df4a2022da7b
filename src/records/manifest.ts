// Owns manifest.json: the list of every file in a dataset directory with its
// sha256, size and row count, plus what produced them. generate writes it
// last, so a directory without one is an unfinished run; an operation that
// writes into a directory updates it through manifest-update (its own outputs
// only), so an audit can tell an edited, added or missing file from one the
// factory wrote.

import { createHash } from 'node:crypto';
import { existsSync, openAsBlob, readdirSync, readFileSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { writeFileAtomically } from './atomic-file.js';
import { readLines } from './jsonl.js';

export const MANIFEST_FORMAT = 'episode-factory.manifest.v1';
export const MANIFEST_FILE = 'manifest.json';

export interface ManifestFile {
  path: string;
  sha256: string;
  bytes: number;
  rows: number;
}

export interface ManifestCounts {
  records: number;
  episodes?: number;
  rejected?: number;
  completed?: number;
  dropped?: number;
  /** Episodes the model server cut short (rows of rejected.jsonl with stage infra); absent when there were none. */
  infra_errors?: number;
}

export interface Manifest {
  format: typeof MANIFEST_FORMAT;
  operation: string;
  lanes: { name: string; sha256: string }[];
  lane?: string;
  lane_sha256?: string;
  factory_version: string;
  seeds?: string;
  tasks?: string[];
  source?: string;
  /** On a dataset made from another (dedup): the sha256 of the source's manifest.json as it was read, so lineage names exact bytes. */
  source_manifest_sha256?: string;
  /** On a manifest rewritten by an operation in place (split, card, export, report): the sha256 of the manifest it replaced. */
  previous_manifest_sha256?: string;
  /** What decided the bytes of a generated dataset (lane, seeds, policy, formats, …), as generate recorded it. */
  run?: Record<string, unknown>;
  /** Set on a shard: which slice of the plan it holds, end exclusive. */
  shard?: { index: number; count: number; start: number; end: number; plan_episodes: number };
  counts: ManifestCounts;
  files: ManifestFile[];
}

/** Rows of a file: records for Arrow and Parquet, lines for everything else. */
export async function countRows(path: string): Promise<number> {
  // Streamed, and only the Parquet footer read: counting must not hold a big file in memory.
  if (path.endsWith('.arrow')) {
    // Loaded here, not at the top: most processes that write a manifest never count a columnar file.
    const { arrowStreamBatches } = await import('./arrow-ipc.js');
    let rows = 0;
    for await (const batch of arrowStreamBatches(path)) rows += batch.numRows;
    return rows;
  }
  if (path.endsWith('.parquet')) {
    const parquet = await import('parquet-wasm');
    const file = await parquet.ParquetFile.fromFile(await openAsBlob(path));
    return file.metadata().fileMetadata().numRows();
  }
  let rows = 0;
  for await (const line of readLines(path)) if (line.terminated) rows++;
  return rows;
}

/** Bytes read at a time when hashing a file, into one buffer: a stream's new chunk per read is garbage that an idle thread leaves uncollected for a long time. */
const HASH_BUFFER_BYTES = 1 << 20;

/** A file's sha256 and size, streamed. */
export async function hashFile(path: string): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(HASH_BUFFER_BYTES);
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
    }
  } finally {
    await handle.close();
  }
  return { sha256: hash.digest('hex'), bytes: statSync(path).size };
}

export async function describeFile(root: string, path: string): Promise<ManifestFile> {
  const { sha256, bytes } = await hashFile(path);
  return { path: relative(root, path).split(sep).join('/'), sha256, bytes, rows: await countRows(path) };
}

/** Every file of a dataset directory: all regular files except the manifest, outside hidden (staging) directories. */
export function datasetFiles(root: string): string[] {
  const out: string[] = [];
  const visit = (directory: string) => {
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      if (entry.name.startsWith('.')) continue;
      const path = join(directory, entry.name);
      if (entry.isDirectory()) visit(path);
      else if (entry.isFile() && relative(root, path) !== MANIFEST_FILE) out.push(path);
    }
  };
  visit(root);
  return out.sort();
}

export async function writeManifest(root: string, fields: Omit<Manifest, 'format' | 'files'>, paths: string[] = datasetFiles(root)): Promise<Manifest> {
  const files: ManifestFile[] = [];
  for (const path of paths) files.push(await describeFile(root, path));
  files.sort((left, right) => (left.path < right.path ? -1 : left.path > right.path ? 1 : 0));
  const manifest: Manifest = { format: MANIFEST_FORMAT, ...fields, files };
  writeFileAtomically(join(root, MANIFEST_FILE), JSON.stringify(manifest, null, 2) + '\n');
  return manifest;
}

export function readManifest(root: string): Manifest | undefined {
  const path = join(root, MANIFEST_FILE);
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as Manifest) : undefined;
}
