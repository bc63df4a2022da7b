// Owns the manifest of a dataset made from another (dedup's output): its
// layout (data/ files past the size bound) and Arrow and Parquet copies, every file it holds, the lanes and counts of its
// records, and the source it came from with the sha256 of the source's
// manifest as it was checked, so the lineage names exact bytes and an audit
// with --parent can tell a forged source from the real one (a source with no
// manifest is named without one: nothing vouched for it).

import { FACTORY_VERSION } from '../core/package-paths.js';
import { passOverDataset } from './dataset-reader.js';
import { DEFAULT_MAX_FILE_BYTES } from '../records/record-files.js';
import { layOutRecords } from '../records/record-layout.js';
import { writeManifest } from '../records/manifest.js';
import type { ReadManifest } from '../records/manifest-verification.js';
import { LaneTally } from './dataset-lanes.js';

export async function writeDerivedManifest(
  dir: string,
  operation: string,
  source: { dir: string; manifest?: ReadManifest },
  counts: Record<string, number> = {},
  maxFileBytes = DEFAULT_MAX_FILE_BYTES,
): Promise<void> {
  // Past the size bound, the records are cut into data/ files: the output is laid out as generate lays out a run.
  await layOutRecords(dir, maxFileBytes);
  const lanes = new LaneTally();
  let completed = 0;
  const records = await passOverDataset(dir, 'listed in a manifest', ({ record }) => {
    lanes.add(record);
    if (record.result.task_completed) completed++;
  });
  await writeManifest(dir, {
    operation,
    factory_version: FACTORY_VERSION,
    lanes: lanes.list(),
    counts: { records, completed, ...counts },
    source: source.dir,
    ...(source.manifest ? { source_manifest_sha256: source.manifest.sha256 } : {}),
  });
}
