// Owns gathering which lanes (name and hash) a dataset's records come from,
// record by record, for manifests that operations other than generate write.

import type { EpisodeRecord } from '../records/episode-record.js';

export class LaneTally {
  private readonly lanes = new Map<string, { name: string; sha256: string }>();

  add(record: EpisodeRecord): void {
    const { lane, lane_sha256 } = record.provenance.lineage;
    const key = `${lane}\u0000${lane_sha256}`;
    if (!this.lanes.has(key)) this.lanes.set(key, { name: lane, sha256: lane_sha256 });
  }

  /** Each (name, hash) once, sorted by name, then hash. */
  list(): { name: string; sha256: string }[] {
    return [...this.lanes.values()].sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : left.sha256 < right.sha256 ? -1 : 1));
  }
}
