// Owns checking a dataset directory against its manifest: every listed path
// stays inside the directory, and every listed file still has the sha256 and
// size the manifest gives it. Audit reports each difference; every other
// command that reads a dataset stops when the files it reads differ, naming
// each difference, before it reads a record or writes a byte, so no command
// turns tampered files into output that looks verified.

import { createHash } from 'node:crypto';
import { existsSync, lstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FactoryError, type Problem } from '../core/errors.js';
import { hashFile, MANIFEST_FILE, type Manifest } from './manifest.js';
import { validateAgainst } from './schema-registry.js';

export interface ManifestDifference {
  /** The path as the manifest (or the directory) names it. */
  path: string;
  /** Missing or not a regular file: there are no bytes of it to read. */
  absent: boolean;
  reason: string;
}

/**
 * Why a manifest's path cannot name a file of the directory: absolute, with a
 * `.` or `..` segment, an empty segment or a backslash. Undefined for a plain
 * relative path. A manifest is data anyone can edit: a path that climbs out
 * would make a command read (and vouch for) a file that is not the dataset's.
 */
export function manifestPathProblem(path: string): string | undefined {
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) return 'is an absolute path, outside the dataset directory';
  if (path.includes('\\')) return 'contains a backslash; manifest paths use "/" and stay inside the dataset directory';
  if (path.includes('\u0000')) return 'contains a NUL byte';
  const segments = path.split('/');
  if (segments.includes('..')) return 'climbs out of the dataset directory with ".."';
  if (segments.some((segment) => segment === '' || segment === '.')) return 'has an empty or "." segment; manifest paths are plain relative paths';
  return undefined;
}

/** The manifest's bytes, parsed and checked against its schema; the sha256 of the bytes names this exact manifest. */
export interface ReadManifest {
  manifest: Manifest;
  sha256: string;
}

/**
 * Reads manifest.json strictly. Undefined when there is none; a manifest that
 * is not JSON, breaks its schema or lists a path outside the directory is a
 * FactoryError (dataset_tampered).
 */
export function readVerifiableManifest(dir: string): ReadManifest | undefined {
  const path = join(dir, MANIFEST_FILE);
  if (!existsSync(path)) return undefined;
  const bytes = readFileSync(path);
  let manifest: Manifest;
  try {
    manifest = JSON.parse(bytes.toString('utf8')) as Manifest;
  } catch (error) {
    throw tampered(dir, [{ where: path, reason: `not valid JSON: ${(error as Error).message}` }]);
  }
  const schemaErrors = validateAgainst('manifest.v1', manifest);
  if (schemaErrors.length > 0) throw tampered(dir, schemaErrors.map((error) => ({ where: `${path}${error.path}`, reason: error.reason })));
  const outside = manifest.files.flatMap((file, index) => {
    const problem = manifestPathProblem(file.path);
    return problem === undefined ? [] : [{ where: `${path}/files/${index}/path`, reason: `${JSON.stringify(file.path)} ${problem}` }];
  });
  if (outside.length > 0) throw tampered(dir, outside);
  return { manifest, sha256: createHash('sha256').update(bytes).digest('hex') };
}

/**
 * Each listed file (or only `paths`, when given) against the disk: missing,
 * not a regular file, other sha256, other size. Paths are taken as listed;
 * call manifestPathProblem first where they may climb out.
 */
export async function compareWithManifest(dir: string, manifest: Manifest, paths?: ReadonlySet<string>): Promise<ManifestDifference[]> {
  const differences: ManifestDifference[] = [];
  for (const listed of manifest.files) {
    if (paths && !paths.has(listed.path)) continue;
    const path = join(dir, listed.path);
    if (!existsSync(path)) {
      differences.push({ path: listed.path, absent: true, reason: 'listed in the manifest but missing' });
      continue;
    }
    // A symbolic link could point anywhere: a listed file is the directory's own bytes.
    if (!lstatSync(path).isFile()) {
      differences.push({ path: listed.path, absent: true, reason: 'is not a regular file (a link or a directory)' });
      continue;
    }
    const actual = await hashFile(path);
    if (actual.sha256 !== listed.sha256) differences.push({ path: listed.path, absent: false, reason: `sha256 is ${actual.sha256.slice(0, 12)}…, the manifest says ${listed.sha256.slice(0, 12)}… (edited after it was written)` });
    if (actual.bytes !== listed.bytes) differences.push({ path: listed.path, absent: false, reason: `${actual.bytes} bytes, the manifest says ${listed.bytes}` });
  }
  return differences;
}

export interface VerifyOptions {
  /** The command, for the message: "split", "export sft", … */
  operation: string;
  /** The files the command reads, relative to the directory; each must be listed and match. */
  inputs: readonly string[];
}

/**
 * Before a command reads a dataset: the manifest is sound and every input is
 * listed with the bytes it has now. Returns the manifest, or undefined when
 * the directory has none (the caller decides whether it may go on without).
 */
export async function verifyInputs(dir: string, options: VerifyOptions): Promise<ReadManifest | undefined> {
  const read = readVerifiableManifest(dir);
  if (read === undefined) return undefined;
  const listed = new Set(read.manifest.files.map((file) => file.path));
  const problems: Problem[] = [];
  for (const input of options.inputs) {
    if (!listed.has(input) && existsSync(join(dir, input))) problems.push({ where: join(dir, input), reason: 'is not in the manifest (added after it was written)' });
  }
  const wanted = new Set(options.inputs.filter((input) => listed.has(input)));
  for (const difference of await compareWithManifest(dir, read.manifest, wanted)) problems.push({ where: join(dir, difference.path), reason: difference.reason });
  if (problems.length > 0) throw tampered(dir, problems, options.operation);
  return read;
}

/** For commands that write a manifest: without one there is nothing to check the inputs against, and writing one would vouch for them. */
export function missingManifestError(dir: string, operation: string): FactoryError {
  return new FactoryError('dataset_tampered', `${dir} has no ${MANIFEST_FILE}, so its files cannot be checked and ${operation} did nothing`, {
    fix: `a dataset's manifest is written by the run that made it: regenerate the dataset with \`episode-factory generate\` (an unfinished run: rerun it with --resume), or restore its ${MANIFEST_FILE}`,
  });
}

function tampered(dir: string, problems: readonly Problem[], operation?: string): FactoryError {
  const count = problems.length;
  return new FactoryError('dataset_tampered', `${dir} does not match its ${MANIFEST_FILE} (${count} difference${count === 1 ? '' : 's'})${operation ? `, so ${operation} did nothing` : ''}`, {
    fix: `run \`episode-factory audit ${dir}\` to see every difference, then regenerate the dataset or restore the files; no command rewrites a manifest over files that changed`,
    problems,
  });
}
