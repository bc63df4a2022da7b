// Owns reading which lanes (name and hash) a dataset's records come from, for
// manifests that operations other than generate write.

import type { Dataset } from './dataset-reader.js';

export function lanesOf(dataset: Dataset): { name: string; sha256: string }[] {
  const lanes = new Map<string, { name: string; sha256: string }>();
  for (const { record } of dataset.rows) {
    const { lane, lane_sha256 } = record.provenance.lineage;
    lanes.set(`${lane}\u0000${lane_sha256}`, { name: lane, sha256: lane_sha256 });
  }
  return [...lanes.values()].sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : left.sha256 < right.sha256 ? -1 : 1));
}
