// Owns which files of a dataset directory a command reads, and checking them
// against the manifest before it reads a record: the records (episodes.jsonl
// or a big dataset's data/ files, and the files split.json names, with split.json itself), the rejected
// episodes, and the exports under sft/ and dpo/. Every dataset command goes
// through here, so none of them reads a file that changed after the run
// wrote it without saying so.

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beginManifestUpdate, type ManifestUpdate } from '../records/manifest-update.js';
import { manifestPathProblem, verifyInputs, type ReadManifest } from '../records/manifest-verification.js';
import { MANIFEST_FILE } from '../records/manifest.js';
import { expandRecordPath, recordFiles } from '../records/record-files.js';
import { assertDatasetDirectory, EPISODES_FILE } from './dataset-reader.js';
import { SPLIT_FILE } from './dataset-split.js';

export const REJECTED_FILE = 'rejected.jsonl';
const EXPORT_FOLDERS = ['sft', 'dpo'];

/**
 * The record files: episodes.jsonl, and when split.json is there, it and the
 * files it names (read loosely here: split-layout refuses a bad layout when
 * the command reads it, after this check has vouched for its bytes).
 */
export function recordInputs(dir: string): string[] {
  const inputs = recordFiles(dir).jsonl;
  const layout = join(dir, SPLIT_FILE);
  if (!existsSync(layout)) return inputs;
  inputs.push(SPLIT_FILE);
  try {
    const splits = (JSON.parse(readFileSync(layout, 'utf8')) as { splits?: Record<string, { path?: unknown }> }).splits ?? {};
    for (const split of Object.values(splits)) {
      if (typeof split?.path !== 'string') continue;
      // A big split is a glob over its files (splits/train-*.jsonl): each file is an input.
      let files: string[];
      try {
        files = expandRecordPath(dir, split.path);
      } catch {
        files = [];
      }
      for (const file of files) if (manifestPathProblem(file) === undefined && !inputs.includes(file)) inputs.push(file);
    }
  } catch {
    // Unreadable: its own bytes are still checked, and the command that reads it says what is wrong.
  }
  return inputs;
}

/** The export files present under sft/ and dpo/, relative to the directory. */
export function exportInputs(dir: string): string[] {
  const inputs: string[] = [];
  for (const folder of EXPORT_FOLDERS) {
    const path = join(dir, folder);
    if (!existsSync(path) || !statSync(path).isDirectory()) continue;
    for (const entry of readdirSync(path, { withFileTypes: true })) if (entry.isFile()) inputs.push(`${folder}/${entry.name}`);
  }
  return inputs.sort();
}

/** Everything a card or a report reads: the records, the rejected episodes and the exports. */
export function describedInputs(dir: string): string[] {
  return [...recordInputs(dir), REJECTED_FILE, ...exportInputs(dir)];
}

/** Inputs with EPISODES_FILE, which stands for the records in either layout, given as the record files it stands for. */
function withRecordFiles(dir: string, inputs: readonly string[]): string[] {
  return [...new Set(inputs.flatMap((input) => (input === EPISODES_FILE ? recordFiles(dir).jsonl : [input])))];
}

export interface CheckedInputs {
  /** The manifest the inputs matched; undefined when the directory has none. */
  manifest?: ReadManifest;
  /** Set when there was no manifest to check against: the caller shows it. */
  warning?: string;
}

/**
 * For a command that only reads (stats, export --out, report elsewhere,
 * dedup's source): the inputs must match the manifest (exit 1 naming each
 * difference). A directory with no manifest is read, with a warning, since
 * nothing here vouches for it; commands that write a manifest refuse it
 * instead (manifest-update).
 */
export async function checkInputs(dir: string, operation: string, inputs: readonly string[]): Promise<CheckedInputs> {
  assertDatasetDirectory(dir);
  const manifest = await verifyInputs(dir, { operation, inputs: withRecordFiles(dir, inputs) });
  if (manifest) return { manifest };
  return { warning: `${dir} has no ${MANIFEST_FILE}: its files cannot be checked against the run that wrote them` };
}

/**
 * For a command that writes into the dataset (split, card, export, report):
 * the directory is a dataset, its manifest is there and the inputs match it;
 * commit() then lists the outputs in it.
 */
export async function beginDatasetUpdate(
  dir: string,
  operation: string,
  files: { inputs: readonly string[]; outputs: readonly string[]; recordOperation?: boolean },
): Promise<ManifestUpdate> {
  assertDatasetDirectory(dir);
  return beginManifestUpdate(dir, { operation, ...files, inputs: withRecordFiles(dir, files.inputs) });
}
