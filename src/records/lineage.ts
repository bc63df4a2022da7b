// Owns how a dataset operation derives a record from another: the record is
// unchanged except for its lineage, which names the operation and the id of
// the record it came from, so an audit can resolve it and reproduce it.

import type { EpisodeRecord } from './episode-record.js';

export function deriveRecord(record: EpisodeRecord, operation: string): EpisodeRecord {
  return {
    ...record,
    provenance: {
      ...record.provenance,
      lineage: { ...record.provenance.lineage, operation, source_record_id: record.record_id },
    },
  };
}
