// Owns manifest.json: the list of every file in a dataset directory with its
// sha256, size and row count, plus what produced them. It is written last, so
// a directory without one is an unfinished run.

import { createHash } from 'node:crypto';
import { createReadStream, statSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

export const MANIFEST_FORMAT = 'episode-factory.manifest.v1';
export const MANIFEST_FILE = 'manifest.json';

export interface ManifestFile {
  path: string;
  sha256: string;
  bytes: number;
  rows: number;
}

export interface Manifest {
  format: typeof MANIFEST_FORMAT;
  lane: string;
  lane_sha256: string;
  factory_version: string;
  seeds: string;
  tasks: string[];
  counts: { episodes: number; records: number; rejected: number; completed: number };
  files: ManifestFile[];
}

/** For a line-based file, rows are its lines; pass `rows` for a binary one (Arrow, Parquet). */
export async function describeFile(root: string, path: string, knownRows?: number): Promise<ManifestFile> {
  const hash = createHash('sha256');
  let rows = 0;
  for await (const chunk of createReadStream(path)) {
    const bytes = chunk as Buffer;
    hash.update(bytes);
    for (let index = bytes.indexOf(10); index >= 0; index = bytes.indexOf(10, index + 1)) rows++;
  }
  return { path: relative(root, path).split(sep).join('/'), sha256: hash.digest('hex'), bytes: statSync(path).size, rows: knownRows ?? rows };
}

export async function writeManifest(
  root: string,
  fields: Omit<Manifest, 'format' | 'files'>,
  paths: string[],
  knownRows: ReadonlyMap<string, number> = new Map(),
): Promise<Manifest> {
  const files: ManifestFile[] = [];
  for (const path of paths) files.push(await describeFile(root, path, knownRows.get(path)));
  files.sort((left, right) => (left.path < right.path ? -1 : left.path > right.path ? 1 : 0));
  const manifest: Manifest = { format: MANIFEST_FORMAT, ...fields, files };
  writeFileSync(join(root, MANIFEST_FILE), JSON.stringify(manifest, null, 2) + '\n');
  return manifest;
}
