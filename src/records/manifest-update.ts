// Owns writing into a dataset that already has a manifest (split, card,
// export, report): the inputs are checked against the manifest before the
// command starts, and the new manifest is the old one with only the
// command's own outputs described again, plus the old manifest's sha256. What
// is on disk is never taken as it is: a file edited, added or removed by hand
// keeps failing audit after any number of commands ran over it.

import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomically } from './atomic-file.js';
import { datasetFiles, describeFile, MANIFEST_FILE, type Manifest, type ManifestCounts, type ManifestFile } from './manifest.js';
import { missingManifestError, verifyInputs } from './manifest-verification.js';

export interface ManifestUpdateOptions {
  /** What the command does, for the manifest's `operation` and for messages ("split", "export sft"). */
  operation: string;
  /** The files the command reads, relative to the directory: each must be listed and unchanged. */
  inputs: readonly string[];
  /**
   * What the command writes, relative to the directory: file paths, or folder
   * paths ending in "/" for everything under them. Only these are described
   * anew; their old entries are dropped.
   */
  outputs: readonly string[];
  /**
   * False for an attachment (the report) that says what the last operation
   * was: the manifest's `operation` stays, so the next report says the same.
   */
  recordOperation?: boolean;
}

export interface ManifestUpdate {
  /** The manifest as verified. */
  readonly manifest: Manifest;
  /** The sha256 of the verified manifest's bytes. */
  readonly sha256: string;
  /** Describes the outputs now on disk and writes the new manifest atomically. */
  commit(options?: { counts?: Partial<ManifestCounts> }): Promise<Manifest>;
}

const sortByPath = (files: ManifestFile[]) => files.sort((left, right) => (left.path < right.path ? -1 : left.path > right.path ? 1 : 0));

/** Checks the inputs; throws (exit 1) when they differ from the manifest or when there is none. */
export async function beginManifestUpdate(dir: string, options: ManifestUpdateOptions): Promise<ManifestUpdate> {
  const read = await verifyInputs(dir, { operation: options.operation, inputs: options.inputs });
  if (read === undefined) throw missingManifestError(dir, options.operation);
  const isOutput = (path: string) => options.outputs.some((output) => (output.endsWith('/') ? path.startsWith(output) : path === output));
  return {
    manifest: read.manifest,
    sha256: read.sha256,
    async commit(commitOptions = {}) {
      const kept = read.manifest.files.filter((file) => !isOutput(file.path));
      const written: ManifestFile[] = [];
      for (const output of options.outputs) {
        const path = join(dir, output);
        if (output.endsWith('/')) {
          if (!existsSync(path) || !statSync(path).isDirectory()) continue;
          for (const file of datasetFiles(dir).filter((candidate) => candidate.startsWith(path))) written.push(await describeFile(dir, file));
        } else if (existsSync(path)) {
          written.push(await describeFile(dir, path));
        }
      }
      const { files: _files, format: _format, ...fields } = read.manifest;
      const manifest: Manifest = {
        ...fields,
        format: read.manifest.format,
        operation: options.recordOperation === false ? read.manifest.operation : options.operation,
        previous_manifest_sha256: read.sha256,
        counts: { ...read.manifest.counts, ...commitOptions.counts },
        files: sortByPath([...kept, ...written]),
      };
      writeFileAtomically(join(dir, MANIFEST_FILE), JSON.stringify(manifest, null, 2) + '\n');
      return manifest;
    },
  };
}
