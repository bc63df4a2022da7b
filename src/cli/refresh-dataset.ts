// Owns bringing a dataset directory's derived files up to date after an
// operation wrote into it: the Arrow and Parquet copies of episodes.jsonl
// (when asked) and manifest.json, so `audit` sees exactly what is there.

import { join } from 'node:path';
import { FACTORY_VERSION } from '../core/package-paths.js';
import { readDataset } from '../dataset/dataset-reader.js';
import { ARROW_FILE, PARQUET_FILE, writeColumnar } from '../records/columnar-files.js';
import { refreshManifest } from '../records/manifest.js';
import { lanesOf } from './dataset-lanes.js';

export async function refreshDataset(dir: string, operation: string, options: { columnar?: boolean; source?: string; counts?: Record<string, number> } = {}): Promise<void> {
  if (options.columnar) {
    await writeColumnar(join(dir, 'episodes.jsonl'), { arrow: join(dir, ARROW_FILE), parquet: join(dir, PARQUET_FILE) });
  }
  const dataset = await readDataset(dir);
  await refreshManifest(dir, {
    operation,
    factory_version: FACTORY_VERSION,
    lanes: lanesOf(dataset),
    counts: { records: dataset.rows.length, completed: dataset.rows.filter((row) => row.record.result.task_completed).length, ...options.counts },
    ...(options.source ? { source: options.source } : {}),
  });
}
