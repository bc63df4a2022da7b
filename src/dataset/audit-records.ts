// Owns the audit's record-level checks made in one streaming pass: each record
// is checked as it is read (ids, lineage against the --parent datasets,
// provenance, the turns of its conversation) and then let go, so an audit's
// memory does not grow with the records' text. What is kept per record is
// its id (to find repeats and resolve source_record_ids) and, for the sample
// to reproduce, the places of the few records drawn. Findings are stored up
// to a bound per check and all counted; they come out grouped by check in the
// order the audit reports them, each group in file order.

import { join } from 'node:path';
import type { EpisodeRecord } from '../records/episode-record.js';
import { deriveRecord } from '../records/lineage.js';
import type { Manifest } from '../records/manifest.js';
import { MANIFEST_FILE } from '../records/manifest.js';
import { type AuditCheck, type Finding, provenanceProblems, recordPlace, sampleKey, turnProblems } from './audit-checks.js';
import { type DatasetProblem, type DatasetRow, readLineAt, type RecordIdIndex, type RecordPlace } from './dataset-reader.js';

/** Findings stored per check; past this, they are counted and one finding says how many more. */
export const MAX_FINDINGS_PER_CHECK = 1000;

/** Unresolved source_record_ids remembered for the end of the pass; past this, a second pass resolves them. */
const MAX_DEFERRED_SOURCES = 10_000;

/** A --parent: its records by id (where each line is), and what its own manifest says of it. */
export interface ParentDataset {
  dir: string;
  /** The sha256 of its manifest.json; undefined when it has none. */
  manifestSha256?: string;
  /** Why its records file cannot be vouched for (differs from its manifest, or no manifest). */
  problems: string[];
  /** Where each of its records is. */
  ids: RecordIdIndex;
}

/** The exact line of a parent's record, read back from its file; undefined when the parent has no such record. */
export function parentLine(parent: ParentDataset, id: string): string | undefined {
  const place = parent.ids.get(id);
  if (place === undefined) return undefined;
  return readLineAt(join(parent.dir, place.file), place.offset, place.bytes).toString('utf8');
}

/** Findings of one check, in file order: the first MAX_FINDINGS_PER_CHECK kept, all counted. */
class FindingList {
  /** Each finding with the place of its line among all the lines read (`order`). */
  readonly stored: { order: number; finding: Finding }[] = [];
  count = 0;

  constructor(readonly check: AuditCheck) {}

  add(order: number, where: string, reason: string): void {
    this.count++;
    if (this.stored.length < MAX_FINDINGS_PER_CHECK) this.stored.push({ order, finding: { check: this.check, where, reason } });
  }

  /** In file order (a finding found at the end of the pass, such as an unresolved source, goes back to its line). */
  list(where: string): Finding[] {
    const sorted = [...this.stored].sort((left, right) => left.order - right.order).map((entry) => entry.finding);
    if (this.count > this.stored.length) sorted.push({ check: this.check, where, reason: `and ${this.count - this.stored.length} more ${this.check} findings like these, not listed` });
    return sorted;
  }
}

/** The sample to reproduce: the records whose hash of their id is smallest, found as the records stream past. */
class SampleKeeper {
  private readonly kept: { hash: string; id: string; place: RecordPlace }[] = [];

  constructor(private readonly size: number) {}

  offer(id: string, place: RecordPlace): void {
    if (this.size === 0) return;
    const hash = sampleKey(id);
    if (this.kept.length === this.size && hash >= this.kept[this.kept.length - 1]!.hash) return;
    let low = 0;
    let high = this.kept.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (this.kept[middle]!.hash < hash) low = middle + 1;
      else high = middle;
    }
    this.kept.splice(low, 0, { hash, id, place: { file: place.file, line: place.line, offset: place.offset, bytes: place.bytes } });
    if (this.kept.length > this.size) this.kept.pop();
  }

  /** The sample, in the order of the hashes (the order sampleIds gives). */
  drawn(): { id: string; place: RecordPlace }[] {
    return this.kept.map(({ id, place }) => ({ id, place }));
  }
}

export interface RecordAuditOptions {
  /** What an "and N more" finding names: where the records are. */
  file: string;
  manifest?: Manifest;
  parents: readonly ParentDataset[];
  /** Records to sample for reproduction (0 for none; ignored with `full`). */
  sample: number;
  /** The index the pass fills with every record id. */
  ids: RecordIdIndex;
}

export class RecordAudit {
  private readonly lines = new FindingList('lines');
  private readonly conflicts = new FindingList('ids');
  private readonly repeats = new FindingList('ids');
  private readonly sources = new FindingList('ids');
  private readonly lineage = new FindingList('lineage');
  private readonly provenance = new FindingList('provenance');
  private readonly turns = new FindingList('turns');
  private readonly sample: SampleKeeper;
  private readonly laneHashes: Map<string, string>;
  /** Sources not found when their record was read: found later in the file, or findings. */
  private deferred: { order: number; where: string; source: string }[] = [];
  /** Entries (records and problems) read so far: findings are listed in this order, across the record files of a big dataset. */
  private order = 0;
  private overflowed = false;
  records = 0;
  problems = 0;

  constructor(private readonly options: RecordAuditOptions) {
    this.sample = new SampleKeeper(options.sample);
    this.laneHashes = new Map((options.manifest?.lanes ?? []).map((lane) => [lane.name, lane.sha256]));
  }

  /** A line that is not a record, or an id that comes back with other bytes. */
  problem(problem: DatasetProblem): void {
    this.problems++;
    // A record_id that comes back with other bytes is a line that reads well: what is wrong is the id.
    (problem.conflict ? this.conflicts : this.lines).add(this.order++, `${problem.file}:${problem.line}`, problem.reason);
  }

  visit(row: DatasetRow): void {
    this.records++;
    const order = this.order++;
    const { record, line, file } = row;
    const where = `${file}:${line}`;
    if (row.repeatOf !== undefined) this.repeats.add(order, where, `record_id ${record.record_id} repeats line ${row.repeatOf}`);
    else this.sample.offer(record.record_id, row);
    this.checkSource(record, order, where);
    this.checkLineage(row, order);
    for (const problem of provenanceProblems(record, this.laneHashes, this.options.manifest !== undefined)) {
      this.provenance.add(order, problem.placed ? recordPlace(file, line, record) : where, problem.reason);
    }
    for (const problem of turnProblems(record)) this.turns.add(order, recordPlace(file, line, record), problem);
  }

  private checkSource(record: EpisodeRecord, order: number, where: string): void {
    const { operation, source_record_id: source } = record.provenance.lineage;
    if (operation === 'generate') {
      if (source !== null) this.sources.add(order, where, `an original record has source_record_id ${source}`);
    } else if (source === null) {
      this.sources.add(order, where, `record ${record.record_id} was made by ${operation} but names no source_record_id`);
    } else if (!this.resolves(source)) {
      // It may still be a record further down the file: decided when the pass ends.
      if (this.deferred.length < MAX_DEFERRED_SOURCES) this.deferred.push({ order, where, source });
      else this.overflowed = true;
    }
  }

  private checkLineage(row: DatasetRow, order: number): void {
    const { parents } = this.options;
    if (parents.length === 0) return;
    const { record, line, text, file } = row;
    const { operation, source_record_id: source } = record.provenance.lineage;
    if (operation === 'generate' || source === null) return;
    const found = parents.map((parent) => parentLine(parent, source)).find((each) => each !== undefined);
    if (found === undefined) return;
    const expected = JSON.stringify(deriveRecord(JSON.parse(found) as EpisodeRecord, operation));
    if (expected !== text) {
      this.lineage.add(order, recordPlace(file, line, record), `differs from its source record ${source} with ${operation} lineage (${firstDifference(expected, text)}): it was edited after ${operation} wrote it`);
    }
  }

  /** Whether a second pass must resolve the sources (too many were left open to remember). */
  get needsSourcePass(): boolean {
    return this.overflowed;
  }

  /** The second pass, when needed, visiting every record again in order: each source checked against the whole dataset's ids. */
  recheckSource(row: DatasetRow, order: number): void {
    const source = row.record.provenance.lineage.source_record_id;
    if (row.record.provenance.lineage.operation === 'generate' || source === null) return;
    if (!this.resolves(source)) this.unresolved(order, `${row.file}:${row.line}`, source);
  }

  /** Whether a source_record_id names a record of a parent, or of this file so far. */
  private resolves(source: string): boolean {
    return this.options.parents.some((parent) => parent.ids.has(source)) || this.options.ids.has(source);
  }

  private unresolved(order: number, where: string, source: string): void {
    this.sources.add(order, where, `source_record_id ${source} is in neither this dataset nor a parent (pass --parent DIR)`);
  }

  /** Ends the pass: sources still unresolved become findings (unless a second pass will decide them all). */
  endPass(): void {
    if (!this.overflowed) for (const { order, where, source } of this.deferred) if (!this.options.ids.has(source)) this.unresolved(order, where, source);
    this.deferred = [];
  }

  /** The lineage findings that concern the parents and the manifest, before any record's. */
  private parentFindings(): Finding[] {
    const { parents, manifest } = this.options;
    const findings: Finding[] = [];
    if (parents.length === 0) return findings;
    for (const parent of parents) for (const problem of parent.problems) findings.push({ check: 'lineage', where: parent.dir, reason: problem });
    const named = manifest?.source_manifest_sha256;
    if (named !== undefined && !parents.some((parent) => parent.manifestSha256 === named)) {
      findings.push({
        check: 'lineage',
        where: MANIFEST_FILE,
        reason: `source_manifest_sha256 is ${named.slice(0, 12)}…, but no --parent has that manifest (${parents.map((parent) => `${parent.dir}: ${parent.manifestSha256?.slice(0, 12) ?? 'none'}…`).join(', ')}): the source changed after this dataset was made from it, or this is not its source`,
      });
    }
    return findings;
  }

  /** The records file's unreadable lines and conflicting ids, in file order (the lines check). */
  lineFindings(): Finding[] {
    const merged = [...this.lines.stored, ...this.conflicts.stored].sort((left, right) => left.order - right.order).map((entry) => entry.finding);
    const more = this.unlistedLines();
    if (more > 0) merged.push({ check: 'lines', where: this.options.file, reason: `and ${more} more unreadable lines or conflicting ids, not listed` });
    return merged;
  }

  private unlistedLines(): number {
    return this.lines.count - this.lines.stored.length + (this.conflicts.count - this.conflicts.stored.length);
  }

  /** Every other record-level finding, grouped: ids, lineage, provenance, turns. */
  recordFindings(): Finding[] {
    const { file } = this.options;
    return [...this.repeats.list(file), ...this.sources.list(file), ...this.parentFindings(), ...this.lineage.list(file), ...this.provenance.list(file), ...this.turns.list(file)];
  }

  /** For each "and N more" finding the lists made: its check and N. */
  unlisted(): { check: AuditCheck; unlisted: number }[] {
    const lists = [this.repeats, this.sources, this.lineage, this.provenance, this.turns];
    const counted = lists.filter((list) => list.count > list.stored.length).map((list) => ({ check: list.check, unlisted: list.count - list.stored.length }));
    const lines = this.unlistedLines();
    if (lines > 0) counted.push({ check: 'lines', unlisted: lines });
    return counted;
  }

  /** The records to reproduce, in the sample's order. */
  sampled(): { id: string; place: RecordPlace }[] {
    return this.sample.drawn();
  }
}

/** Where two texts first differ, with a little of each, for a finding. */
function firstDifference(expected: string, actual: string): string {
  let index = 0;
  while (index < expected.length && expected[index] === actual[index]) index++;
  const excerpt = (text: string) => JSON.stringify(text.slice(Math.max(0, index - 20), index + 20));
  return `from character ${index}: expected ${excerpt(expected)}, found ${excerpt(actual)}`;
}
