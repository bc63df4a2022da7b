// Owns the checks an audit makes from the files and records alone: the
// manifest against the directory (every file's sha256, size and rows, nothing
// missing, nothing extra), every JSONL line readable (reported by file and line,
// never skipped), record ids unique and every source_record_id resolvable, and
// the provenance gate (actors, model digests, seed, lane and its hash, the
// commands to regenerate and replay).

import { existsSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { EpisodeRecord } from '../records/episode-record.js';
import { readJsonl } from '../records/jsonl.js';
import { countRows, datasetFiles, hashFile, MANIFEST_FILE, readManifest, type Manifest } from '../records/manifest.js';
import { validateAgainst } from '../records/schema-registry.js';
import type { Dataset } from './dataset-reader.js';

export type AuditCheck = 'manifest' | 'lines' | 'ids' | 'provenance' | 'columnar' | 'reproduction';

export interface Finding {
  check: AuditCheck;
  where: string;
  reason: string;
}

export async function checkManifest(dir: string): Promise<{ manifest?: Manifest; findings: Finding[] }> {
  const findings: Finding[] = [];
  const found = (where: string, reason: string) => findings.push({ check: 'manifest', where, reason });
  let manifest: Manifest | undefined;
  try {
    manifest = readManifest(dir);
  } catch (error) {
    found(MANIFEST_FILE, `not valid JSON: ${(error as Error).message}`);
    return { findings };
  }
  if (!manifest) {
    found(MANIFEST_FILE, 'missing: the run that wrote this directory did not finish, or the file was removed');
    return { findings };
  }
  for (const error of validateAgainst('manifest.v1', manifest)) found(MANIFEST_FILE, `${error.path || '/'}: ${error.reason}`);
  if (findings.length > 0) return { findings };
  const present = new Set(datasetFiles(dir).map((path) => relative(dir, path).split(sep).join('/')));
  for (const listed of manifest.files) {
    if (!present.has(listed.path)) {
      found(listed.path, 'listed in the manifest but missing');
      continue;
    }
    present.delete(listed.path);
    const path = join(dir, listed.path);
    const actual = await hashFile(path);
    if (actual.sha256 !== listed.sha256) found(listed.path, `sha256 is ${actual.sha256.slice(0, 12)}…, the manifest says ${listed.sha256.slice(0, 12)}… (edited after it was written)`);
    if (actual.bytes !== listed.bytes) found(listed.path, `${actual.bytes} bytes, the manifest says ${listed.bytes}`);
    let rows: number;
    try {
      rows = await countRows(path);
    } catch (error) {
      // A columnar copy that does not decode has no row count: the columnar check says where it stops.
      found(listed.path, `its rows cannot be counted: ${(error as Error).message}`);
      continue;
    }
    if (rows !== listed.rows) found(listed.path, `${rows} rows, the manifest says ${listed.rows}`);
  }
  for (const extra of [...present].sort()) found(extra, 'not in the manifest (added after it was written)');
  return { manifest, findings };
}

/**
 * Every JSONL file of the directory, read line by line: torn, blank or corrupt
 * lines are findings, and in the records file lines that are JSON but not
 * records. The records file, already read as `dataset`, is not read again.
 */
export async function checkLines(dir: string, dataset?: Dataset): Promise<Finding[]> {
  const findings: Finding[] = [];
  for (const path of datasetFiles(dir).filter((file) => file.endsWith('.jsonl'))) {
    const file = relative(dir, path).split(sep).join('/');
    const problems = dataset && file === dataset.file ? dataset.problems : (await readJsonl(path)).problems;
    for (const problem of problems) findings.push({ check: 'lines', where: `${file}:${problem.line}`, reason: problem.reason });
  }
  return findings;
}

/** Ids unique; each source_record_id names a record here or in a parent dataset. */
export function checkIds(dataset: Dataset, parentIds: ReadonlySet<string>): Finding[] {
  const findings: Finding[] = [];
  const firstLine = new Map<string, number>();
  for (const { record, line } of dataset.rows) {
    const seen = firstLine.get(record.record_id);
    if (seen !== undefined) findings.push({ check: 'ids', where: `${dataset.file}:${line}`, reason: `record_id ${record.record_id} repeats line ${seen}` });
    else firstLine.set(record.record_id, line);
  }
  for (const { record, line } of dataset.rows) {
    const { operation, source_record_id: source } = record.provenance.lineage;
    if (operation === 'generate') {
      if (source !== null) findings.push({ check: 'ids', where: `${dataset.file}:${line}`, reason: `an original record has source_record_id ${source}` });
    } else if (source === null) {
      findings.push({ check: 'ids', where: `${dataset.file}:${line}`, reason: `record ${record.record_id} was made by ${operation} but names no source_record_id` });
    } else if (!parentIds.has(source) && !firstLine.has(source)) {
      findings.push({ check: 'ids', where: `${dataset.file}:${line}`, reason: `source_record_id ${source} is in neither this dataset nor a parent (pass --parent DIR)` });
    }
  }
  return findings;
}

/** The policy actor, or a model that acted: a record without a digest for a model cannot be reproduced. */
function actorProblems(record: EpisodeRecord): string[] {
  const problems: string[] = [];
  const actors = record.provenance.actors as Record<string, unknown>[];
  if (!actors.some((actor) => actor.role === 'policy')) problems.push('no policy actor');
  for (const actor of actors) {
    const isModel = actor.kind === 'model' || actor.kind === 'ollama';
    if (isModel && (typeof actor.digest !== 'string' || actor.digest.length === 0)) problems.push(`actor ${String(actor.name)} is a model with no digest`);
  }
  return problems;
}

export function checkProvenance(dataset: Dataset, manifest: Manifest | undefined): Finding[] {
  const findings: Finding[] = [];
  const laneHashes = new Map((manifest?.lanes ?? []).map((lane) => [lane.name, lane.sha256]));
  for (const { record, line } of dataset.rows) {
    const where = `${dataset.file}:${line}`;
    const { lineage } = record.provenance;
    for (const problem of actorProblems(record)) findings.push({ check: 'provenance', where, reason: problem });
    if (!lineage.generate_command.includes(` ${lineage.lane} `) || !lineage.generate_command.includes(`--seeds ${lineage.seed}..${lineage.seed}`)) {
      findings.push({ check: 'provenance', where, reason: `generate_command does not regenerate lane ${lineage.lane} seed ${lineage.seed}: ${lineage.generate_command}` });
    }
    if (!lineage.replay_command.includes(record.record_id)) findings.push({ check: 'provenance', where, reason: `replay_command does not name ${record.record_id}` });
    const listed = laneHashes.get(lineage.lane);
    if (manifest && listed === undefined) findings.push({ check: 'provenance', where, reason: `lane ${lineage.lane} is not among the manifest's lanes` });
    else if (listed !== undefined && listed !== lineage.lane_sha256) {
      findings.push({ check: 'provenance', where, reason: `lane_sha256 ${lineage.lane_sha256.slice(0, 12)}… differs from the manifest's ${listed.slice(0, 12)}…` });
    }
  }
  return findings;
}

/** A deterministic sample of record ids, independent of file order. */
export function sampleIds(ids: readonly string[], size: number, hash: (text: string) => string): string[] {
  return [...ids].sort((left, right) => {
    const [a, b] = [hash(`audit\u0000${left}`), hash(`audit\u0000${right}`)];
    return a < b ? -1 : a > b ? 1 : 0;
  }).slice(0, size);
}

export function parentIdsExist(dirs: readonly string[]): string[] {
  return dirs.filter((dir) => !existsSync(join(dir, 'episodes.jsonl')));
}
