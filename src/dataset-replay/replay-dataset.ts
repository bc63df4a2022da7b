// Owns `replay DIR`: re-verify every record of a dataset from the records
// alone. Lanes are found by the name each record carries and must still hash
// to the value it recorded; corrupt or torn lines are failures with their line
// numbers, never skipped; and the file is compared with its manifest, since a
// deleted line leaves every remaining record verifiable.

import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { errorMessage, FactoryError } from '../core/errors.js';
import type { Lane } from '../lanes/lane.js';
import { loadLane } from '../lanes/lane-loader.js';
import { readJsonl } from '../records/jsonl.js';
import { compareWithManifest, readVerifiableManifest } from '../records/manifest-verification.js';
import { replayRecord } from '../verify/replay.js';
import { EPISODES_FILE } from '../generation/dataset-directory.js';
import { policyFactoryFor } from '../selection/scripted-policy-factory.js';

export interface ReplayFailure {
  /** The record id, or `episodes.jsonl:<line>` for a line that is not a record. */
  where: string;
  problems: string[];
}

export interface ReplayDatasetSummary {
  dir: string;
  /** Lines that parsed as JSON (and were selected). */
  records: number;
  verified: number;
  /** Records that did not verify. */
  failed: number;
  /** Lines that are not records at all: torn, blank, not UTF-8 or not JSON. */
  corrupt_lines: number;
  /**
   * How episodes.jsonl differs from manifest.json (a line deleted or added
   * leaves every remaining record verifiable: only the manifest shows it);
   * empty when they agree. `no_manifest` is set when there was none to check.
   */
  manifest_problems: string[];
  no_manifest?: true;
  failures: ReplayFailure[];
  wall_seconds: number;
}

export interface ReplayDatasetOptions {
  recordIds?: string[];
  /** A lane file to use instead of finding each record's lane by name. */
  lane?: string;
  onRecord?: (done: number, total: number, ok: boolean) => void;
}

/** episodes.jsonl against the manifest: what differs, or that there is no manifest to compare with. */
async function manifestCheck(dir: string): Promise<{ manifestProblems: string[]; noManifest: boolean }> {
  try {
    const read = readVerifiableManifest(dir);
    if (read === undefined) return { manifestProblems: [], noManifest: true };
    if (!read.manifest.files.some((listed) => listed.path === EPISODES_FILE)) return { manifestProblems: [`${EPISODES_FILE} is not in the manifest`], noManifest: false };
    const differences = await compareWithManifest(dir, read.manifest, new Set([EPISODES_FILE]));
    return { manifestProblems: differences.map((difference) => `${difference.path}: ${difference.reason}`), noManifest: false };
  } catch (error) {
    const problems = error instanceof FactoryError && error.problems.length > 0 ? error.problems.map((problem) => `${problem.where}: ${problem.reason}`) : [errorMessage(error)];
    return { manifestProblems: problems, noManifest: false };
  }
}

export async function replayDataset(dir: string, options: ReplayDatasetOptions = {}): Promise<ReplayDatasetSummary> {
  const started = performance.now();
  const file = join(dir, EPISODES_FILE);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new FactoryError('dataset_not_found', `${dir} is not a directory`, { fix: 'pass the directory `generate` wrote, e.g. datasets/tool-world-v1' });
  }
  if (!existsSync(file)) {
    throw new FactoryError('dataset_not_found', `${dir} has no ${EPISODES_FILE}`, { fix: 'run `episode-factory generate <lane> --out ' + dir + '` first' });
  }
  const recordIds = options.recordIds ?? [];
  const filtered = recordIds.length > 0;
  // Like a corrupt line, a line removed elsewhere is not the business of a replay of chosen records.
  const { manifestProblems, noManifest } = filtered ? { manifestProblems: [], noManifest: false } : await manifestCheck(dir);
  const { rows, problems } = await readJsonl(file);
  // A corrupt line elsewhere in the file is not the business of a replay of chosen records.
  const failures: ReplayFailure[] = filtered ? [] : problems.map((problem) => ({ where: `${EPISODES_FILE}:${problem.line}`, problems: [problem.reason] }));
  const corruptLines = failures.length;

  let selected = rows;
  if (filtered) {
    const wanted = new Set(recordIds);
    selected = rows.filter((row) => wanted.has((row.value as { record_id?: string })?.record_id ?? ''));
    const found = new Set(selected.map((row) => (row.value as { record_id: string }).record_id));
    const missing = recordIds.filter((id) => !found.has(id));
    if (missing.length > 0) {
      throw new FactoryError('usage', `${file} has no record ${missing.map((id) => `"${id}"`).join(', ')}`, { fix: 'check the id against the record_id fields of the file' });
    }
  }

  const lanes = new Map<string, Lane | Error>();
  const laneFor = (name: string): Lane | Error => {
    const key = options.lane ?? name;
    if (!lanes.has(key)) {
      try {
        lanes.set(key, loadLane(key));
      } catch (error) {
        lanes.set(key, error instanceof Error ? error : new Error(String(error)));
      }
    }
    return lanes.get(key)!;
  };

  let verified = 0;
  let failed = 0;
  const firstLine = new Map<string, number>();
  for (const [index, row] of selected.entries()) {
    const value = row.value as { record_id?: unknown; provenance?: { lineage?: { lane?: unknown } } };
    const where = typeof value?.record_id === 'string' ? value.record_id : `${EPISODES_FILE}:${row.line}`;
    const laneName = value?.provenance?.lineage?.lane;
    let ok = false;
    const seenAt = typeof value?.record_id === 'string' ? firstLine.get(value.record_id) : undefined;
    if (typeof value?.record_id === 'string' && seenAt === undefined) firstLine.set(value.record_id, row.line);
    if (seenAt !== undefined) {
      failures.push({ where, problems: [`line ${row.line} repeats the record_id of line ${seenAt}`] });
    } else if (typeof laneName !== 'string') {
      failures.push({ where, problems: [`line ${row.line} has no provenance.lineage.lane`] });
    } else {
      const lane = laneFor(laneName);
      if (lane instanceof Error) {
        const fix = lane instanceof FactoryError && lane.fix ? ` (${lane.fix})` : '';
        failures.push({ where, problems: [`cannot load lane "${laneName}": ${errorMessage(lane)}${fix}`] });
      } else {
        const verdict = await replayRecord(row.value, lane, {
          text: row.text,
          derivePolicy: (actor) => (actor.kind === 'scripted' ? policyFactoryFor(lane) : undefined),
        });
        ok = verdict.ok;
        if (ok) verified++;
        else failures.push({ where, problems: verdict.problems });
      }
    }
    if (!ok) failed++;
    options.onRecord?.(index + 1, selected.length, ok);
  }

  return {
    dir,
    records: selected.length,
    verified,
    failed,
    corrupt_lines: corruptLines,
    manifest_problems: manifestProblems,
    ...(noManifest ? { no_manifest: true as const } : {}),
    failures,
    wall_seconds: Math.round(performance.now() - started) / 1000,
  };
}
