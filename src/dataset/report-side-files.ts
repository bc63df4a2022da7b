// Owns what the files beside the records add to the report: the rejected
// episodes by stage (with the first few named), the manifest's operation,
// seeds and dropped count, and the rows of a JSONL file. A missing or
// unreadable side file leaves its part blank; it never stops the report.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorMessage } from '../core/errors.js';
import { readLines } from '../records/jsonl.js';
import { MANIFEST_FILE } from '../records/manifest.js';
import type { DatasetProblem } from './dataset-reader.js';
import { REJECTED_FILE } from './dataset-inputs.js';
import { sortedRecord } from './key-order.js';
import { MAX_LISTED, type RejectedExample } from './report-model.js';

interface RejectedSummary {
  rows: number;
  by_stage: Record<string, number>;
  examples: RejectedExample[];
  problems: DatasetProblem[];
}

export async function readRejected(dir: string): Promise<RejectedSummary | null> {
  const path = join(dir, REJECTED_FILE);
  if (!existsSync(path)) return null;
  const byStage = new Map<string, number>();
  const summary: RejectedSummary = { rows: 0, by_stage: {}, examples: [], problems: [] };
  for await (const entry of readLines(path)) {
    if (entry.text.trim() === '') continue;
    let row: { record_id?: unknown; task?: unknown; seed?: unknown; stage?: unknown; reason?: unknown };
    try {
      row = JSON.parse(entry.text) as typeof row;
    } catch (error) {
      summary.problems.push({ file: REJECTED_FILE, line: entry.line, reason: `not valid JSON (${errorMessage(error)})` });
      continue;
    }
    summary.rows++;
    const stage = typeof row.stage === 'string' ? row.stage : 'unknown';
    byStage.set(stage, (byStage.get(stage) ?? 0) + 1);
    if (summary.examples.length < MAX_LISTED) {
      summary.examples.push({
        record_id: String(row.record_id ?? `line ${entry.line}`),
        task: String(row.task ?? ''),
        seed: typeof row.seed === 'number' ? row.seed : null,
        stage,
        reason: String(row.reason ?? ''),
      });
    }
  }
  summary.by_stage = sortedRecord(byStage);
  return summary;
}

interface ManifestFacts {
  operation: string | null;
  seeds: string | null;
  dropped: number | null;
}

/** What the manifest adds; a missing or unreadable manifest only leaves these blank, it never stops the report. */
export function readManifestFacts(dir: string): ManifestFacts {
  const path = join(dir, MANIFEST_FILE);
  if (!existsSync(path)) return { operation: null, seeds: null, dropped: null };
  try {
    const manifest = JSON.parse(readFileSync(path, 'utf8')) as { operation?: unknown; seeds?: unknown; counts?: { dropped?: unknown } };
    return {
      operation: typeof manifest.operation === 'string' ? manifest.operation : null,
      seeds: typeof manifest.seeds === 'string' ? manifest.seeds : null,
      dropped: typeof manifest.counts?.dropped === 'number' ? manifest.counts.dropped : null,
    };
  } catch {
    return { operation: null, seeds: null, dropped: null };
  }
}

export async function countRows(path: string): Promise<number> {
  let rows = 0;
  for await (const entry of readLines(path)) if (entry.text.trim() !== '') rows++;
  return rows;
}
