// Owns the layout of a generated dataset directory and how a finished run
// lands in it: the file names, deciding what in --out belongs to an earlier
// dataset of ours (and so may be replaced) before anything runs, assembling
// files in a staging directory, and publishing them. Publishing is a plan
// written to staging first and carried out step by step, each step safe to
// repeat, with the manifest moved in last: a run killed anywhere in it keeps
// its parts and `--resume` finishes the publication. Nothing that is not a
// file of an earlier dataset of ours is ever removed.

import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, renameSync, rmdirSync, rmSync, statSync, writeSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { errorMessage, FactoryError } from '../core/errors.js';
import { failpoint } from '../core/failpoint.js';
import { syncDirectory, writeFileAtomically } from '../records/atomic-file.js';
import { ARROW_FILE, PARQUET_FILE } from '../records/columnar-names.js';
import { MANIFEST_FILE, writeManifest, type Manifest } from '../records/manifest.js';
import { DATA_DIRECTORY, isRecordFilePath } from '../records/record-files.js';
import { validateAgainst } from '../records/schema-registry.js';
import { TRACES_DIR } from '../runner/trace-archive.js';

export const EPISODES_FILE = 'episodes.jsonl';
export const REJECTED_FILE = 'rejected.jsonl';
export const STAGING_DIR = '.partial';
/** Marks a staging directory as the factory's, so that it may be cleared. */
export const STAGING_MARKER = 'staging.json';
/** In staging: what publishing will remove and move; present from the moment publishing starts until it is done. */
export const PUBLISH_PLAN_FILE = 'publish.json';
const PUBLISH_FORMAT = 'episode-factory.publish.v1';
const STAGING_FORMAT = 'episode-factory.staging.v1';
/** generate's run identity (run-parts.ts) also marks a staging directory as ours. */
const RUN_IDENTITY_FILE = 'run.json';

/** The files publishing replaces at the top of a dataset directory. */
const DATA_FILES: readonly string[] = [EPISODES_FILE, REJECTED_FILE, ARROW_FILE, PARQUET_FILE];

interface PublishPlan {
  format: typeof PUBLISH_FORMAT;
  /** Files of the previous dataset, relative to the output directory, removed unless this dataset writes them again. */
  remove: string[];
  /** This dataset's files, relative to staging and to the output directory alike. */
  files: string[];
}

/**
 * Decides, before anything runs, what in `outDir` the new dataset may
 * replace, and refuses a directory holding anything else it would touch.
 * A directory is an earlier dataset when its manifest parses and validates
 * as ours; without a manifest, when its only data files hold our records
 * (the committed samples keep no manifest). Files under traces/ that the
 * dataset does not list are someone else's: the run is refused rather than
 * remove them. Returns the previous dataset's removable files, relative.
 */
export function claimDatasetDirectory(outDir: string): string[] {
  if (!existsSync(outDir)) return [];
  if (!statSync(outDir).isDirectory()) {
    throw new FactoryError('usage', `--out ${outDir} is a file`, { fix: 'choose a directory path for --out' });
  }
  const staging = join(outDir, STAGING_DIR);
  assertOwnStaging(staging);
  const pending = readPublishPlan(staging);
  const owned = new Set<string>(pending ? [...pending.remove, ...pending.files] : []);
  const manifestPath = join(outDir, MANIFEST_FILE);
  if (existsSync(manifestPath)) {
    for (const file of readOwnManifest(outDir, manifestPath).files) owned.add(file.path);
  } else if (!pending) {
    for (const file of DATA_FILES) if (existsSync(join(outDir, file))) owned.add(assertOwnDataFile(outDir, file));
    const others = readdirSync(outDir).filter((entry) => entry !== STAGING_DIR);
    if (others.length > 0 && owned.size === 0) {
      const strangers = others.slice(0, 3);
      throw new FactoryError('usage', `--out ${outDir} is not empty and holds no dataset (it has ${strangers.join(', ')}${others.length > 3 ? ', …' : ''})`, {
        fix: 'choose a new or empty directory; generate replaces traces/ and the dataset files in it',
      });
    }
  }
  for (const below of [TRACES_DIR, DATA_DIRECTORY]) {
    const strangers = filesBelow(join(outDir, below), below).filter((path) => !owned.has(path));
    if (strangers.length > 0) {
      throw new FactoryError(
        'usage',
        `--out ${outDir}: ${strangers.slice(0, 3).map((path) => join(outDir, path)).join(', ')}${strangers.length > 3 ? `, and ${strangers.length - 3} more,` : ''} ${strangers.length === 1 ? 'is' : 'are'} not part of the dataset there, and publishing replaces ${below}/`,
        { fix: `move ${strangers.length === 1 ? 'it' : 'them'} out of ${join(outDir, below)}, or choose another --out; nothing was changed` },
      );
    }
  }
  return [...owned].filter(isReplaceable).sort();
}

/** Makes (or, when it is ours, clears) the staging directory and marks it as the factory's. */
export function createStaging(outDir: string): string {
  const staging = join(outDir, STAGING_DIR);
  assertOwnStaging(staging);
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(join(staging, TRACES_DIR), { recursive: true });
  writeFileAtomically(join(staging, STAGING_MARKER), JSON.stringify({ format: STAGING_FORMAT }) + '\n');
  return staging;
}

/** True when a publication was started in this staging directory and not finished: finish it with `completePublish`. */
export function publishPending(staging: string): boolean {
  return readPublishPlan(staging) !== undefined;
}

/**
 * Publishes the dataset assembled in `staging` (`files`, relative paths)
 * over the previous one (`previous`, as claimDatasetDirectory returned).
 * The manifest is written into staging first and moved into place last.
 */
export async function publishDataset(
  staging: string,
  outDir: string,
  previous: readonly string[],
  files: readonly string[],
  fields: Omit<Manifest, 'format' | 'files'>,
): Promise<void> {
  await writeManifest(staging, fields, files.map((file) => join(staging, file)));
  const plan: PublishPlan = { format: PUBLISH_FORMAT, remove: [...previous], files: [...files] };
  writeFileAtomically(join(staging, PUBLISH_PLAN_FILE), JSON.stringify(plan) + '\n');
  failpoint('publish-planned');
  completePublish(staging, outDir);
}

/** Carries out a publish plan: every step can be repeated after a crash, and the manifest lands last. */
export function completePublish(staging: string, outDir: string): void {
  const plan = readPublishPlan(staging);
  if (!plan) throw new FactoryError('dataset_corrupt', `${staging} holds no publish plan`, { fix: 'rerun the same command with --resume' });
  const stagedManifest = join(staging, MANIFEST_FILE);
  if (existsSync(stagedManifest)) {
    // The old manifest goes first: a half-published directory must not claim to be the old dataset.
    rmSync(join(outDir, MANIFEST_FILE), { force: true });
    const incoming = new Set(plan.files);
    for (const path of plan.remove) if (!incoming.has(path) && isReplaceable(path)) rmSync(join(outDir, path), { force: true });
    removeIfEmpty(join(outDir, TRACES_DIR));
    removeIfEmpty(join(outDir, DATA_DIRECTORY));
    failpoint('publish-removed');
    const stagedTraces = join(staging, TRACES_DIR);
    if (existsSync(stagedTraces) && !existsSync(join(outDir, TRACES_DIR))) renameSync(stagedTraces, join(outDir, TRACES_DIR));
    for (const path of plan.files) {
      const source = join(staging, path);
      if (!existsSync(source)) continue;
      mkdirSync(dirname(join(outDir, path)), { recursive: true });
      renameSync(source, join(outDir, path));
    }
    syncDirectory(outDir);
    if (existsSync(join(outDir, TRACES_DIR))) syncDirectory(join(outDir, TRACES_DIR));
    failpoint('publish-moved');
    renameSync(stagedManifest, join(outDir, MANIFEST_FILE));
    syncDirectory(outDir);
  }
  failpoint('publish-sealed');
  rmSync(staging, { recursive: true, force: true });
}

/** Appends files, in order, into one, a megabyte at a time, flushed to disk before it is published. */
export function concatenateFiles(sources: readonly string[], target: string): void {
  const buffer = Buffer.allocUnsafe(1 << 20);
  const fd = openSync(target, 'w');
  try {
    for (const source of sources) {
      const input = openSync(source, 'r');
      try {
        let read: number;
        while ((read = readSync(input, buffer, 0, buffer.length, null)) > 0) {
          let offset = 0;
          while (offset < read) offset += writeSync(fd, buffer, offset, read - offset);
        }
      } finally {
        closeSync(input);
      }
    }
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Only the data files at the top, record files below data/ and trace files below traces/ are ever removed or replaced, whatever a manifest lists. */
function isReplaceable(path: string): boolean {
  if (DATA_FILES.includes(path) || isRecordFilePath(path)) return true;
  const normal = posix.normalize(path);
  return normal === path && normal.startsWith(`${TRACES_DIR}/`) && !normal.split('/').includes('..');
}

function readOwnManifest(outDir: string, path: string): Manifest {
  let document: unknown;
  let problem: string | undefined;
  try {
    document = JSON.parse(readFileSync(path, 'utf8'));
    const errors = validateAgainst('manifest.v1', document);
    if (errors.length > 0) problem = `${errors[0]!.path || '/'}: ${errors[0]!.reason}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''}`;
  } catch (error) {
    problem = `not valid JSON: ${errorMessage(error)}`;
  }
  if (problem !== undefined) {
    throw new FactoryError('usage', `--out ${outDir} is not a dataset of episode-factory: its ${MANIFEST_FILE} is not one of ours (${problem})`, {
      fix: 'choose a new or empty directory for --out; nothing in it was changed',
    });
  }
  return document as Manifest;
}

/** A data file without a manifest is ours only if its first line is a record (or a rejected row) of ours. */
function assertOwnDataFile(outDir: string, file: string): string {
  const path = join(outDir, file);
  if (file !== EPISODES_FILE && file !== REJECTED_FILE) {
    // Columnar copies carry no marker of their own: without a manifest they are only ours beside our records.
    if (!existsSync(join(outDir, EPISODES_FILE))) throw notOurs(outDir, file, 'there is no manifest and no episodes.jsonl beside it');
    return file;
  }
  const line = firstLine(path);
  if (line === '') return file;
  let row: unknown;
  try {
    row = JSON.parse(line);
  } catch {
    throw notOurs(outDir, file, 'its first line is not JSON');
  }
  const fields = row as { record_id?: unknown; provenance?: unknown; stage?: unknown };
  const ours = typeof row === 'object' && row !== null && typeof fields.record_id === 'string' && (file === EPISODES_FILE ? typeof fields.provenance === 'object' : typeof fields.stage === 'string');
  if (!ours) throw notOurs(outDir, file, 'its first line is not a record of episode-factory');
  return file;
}

function notOurs(outDir: string, file: string, why: string): FactoryError {
  return new FactoryError('usage', `--out ${outDir} is not a dataset of episode-factory: ${join(outDir, file)} is not one of ours (${why})`, {
    fix: 'choose a new or empty directory for --out; nothing in it was changed',
  });
}

function firstLine(path: string): string {
  const buffer = Buffer.alloc(1 << 20);
  const fd = openSync(path, 'r');
  try {
    const read = readSync(fd, buffer, 0, buffer.length, 0);
    const text = buffer.subarray(0, read).toString('utf8');
    const end = text.indexOf('\n');
    return end === -1 ? text : text.slice(0, end);
  } finally {
    closeSync(fd);
  }
}

/** A staging directory is cleared only when the factory made it. */
function assertOwnStaging(staging: string): void {
  if (!existsSync(staging)) return;
  const entries = statSync(staging).isDirectory() ? readdirSync(staging) : null;
  if (entries !== null && (entries.length === 0 || [STAGING_MARKER, RUN_IDENTITY_FILE, PUBLISH_PLAN_FILE].some((marker) => entries.includes(marker)))) return;
  throw new FactoryError('usage', `${staging} is not a staging directory of episode-factory, and the factory writes its work in progress there`, {
    fix: `move ${staging} away, or choose another --out; nothing was changed`,
  });
}

function readPublishPlan(staging: string): PublishPlan | undefined {
  const path = join(staging, PUBLISH_PLAN_FILE);
  if (!existsSync(path)) return undefined;
  let plan: PublishPlan;
  try {
    plan = JSON.parse(readFileSync(path, 'utf8')) as PublishPlan;
  } catch (error) {
    throw new FactoryError('dataset_corrupt', `${path} is not readable: ${errorMessage(error)}`, { fix: 'rerun the same command with --restart' });
  }
  if (plan.format !== PUBLISH_FORMAT || !Array.isArray(plan.remove) || !Array.isArray(plan.files)) {
    throw new FactoryError('dataset_corrupt', `${path} is not a publish plan of this factory`, { fix: 'rerun the same command with --restart' });
  }
  return plan;
}

/** Files below a directory, as paths relative to its parent, `prefix/…`. */
function filesBelow(directory: string, prefix: string): string[] {
  if (!existsSync(directory)) return [];
  const out: string[] = [];
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = `${prefix}/${entry.name}`;
    if (entry.isDirectory()) out.push(...filesBelow(join(directory, entry.name), path));
    else out.push(path);
  }
  return out;
}

function removeIfEmpty(directory: string): void {
  if (existsSync(directory) && readdirSync(directory).length === 0) rmdirSync(directory);
}
