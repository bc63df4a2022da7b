// Owns what a dataset card says of the records themselves, gathered one
// record at a time (a dataset is never held whole): the statistics, the lanes,
// tasks, worlds and provenance facts, the lane names (for their cards) and the
// ids (for checking the exports). What it keeps grows with the distinct
// lanes, tasks and seeds, and by a few dozen bytes a record for the ids, not
// with the records' text.

import { FingerprintTable } from '../core/fingerprint-table.js';
import { sha256Hex } from '../core/hashing.js';
import { doubled } from '../core/typed-arrays.js';
import type { EpisodeRecord } from '../records/episode-record.js';
import { type Dataset, passOverDataset, type PassOptions } from './dataset-reader.js';
import { type DatasetStats, StatsAccumulator } from './dataset-stats.js';
import { compareKeys, sortedRecord } from './key-order.js';

export interface CardLane {
  name: string;
  sha256: string;
  records: number;
  tasks: string[];
  seeds: number[];
}

export interface CardTask {
  id: string;
  title: string;
  tags: string[];
}

export interface CardWorld {
  name: string;
  version: string;
  tools: string[];
}

export interface RecordFacts {
  stats: DatasetStats;
  lanes: CardLane[];
  tasks: CardTask[];
  worlds: CardWorld[];
  /** lineage.factory_version of the records. */
  factory_versions: string[];
  produced_at: string[];
  /** Records by lineage.operation (generate, dedup, merge, ...). */
  operations: Record<string, number>;
  /** Records by result.verified_by. */
  verified_by: Record<string, number>;
  /** Commands from the first record's lineage, to show how one record is regenerated and replayed. */
  example: { record_id: string; generate_command: string; replay_command: string } | null;
}

function sortedUnique(values: Iterable<string>): string[] {
  return [...new Set(values)].sort(compareKeys);
}

function tally(counts: Map<string, number>, value: string): void {
  counts.set(value, (counts.get(value) ?? 0) + 1);
}

/**
 * The ids of a records file, in its order, and which completed their task:
 * what an export is checked against. Each id is a 64-bit fingerprint (its
 * record's number beside it) and a byte, about 30 bytes a record where two
 * Sets of the ids spent some 200; two ids would have to share 64 bits of
 * their sha256 for one to be taken for the other (an export is checked for
 * being stale, not for tampering: the audit is for that).
 */
export class RecordIds {
  private readonly numbers = new FingerprintTable();
  private completedFlags = new Uint8Array(1024);
  private count = 0;
  /** Records whose task was completed. */
  completed = 0;

  get size(): number {
    return this.count;
  }

  add(record: EpisodeRecord): void {
    if (this.numbers.getOrAdd(sha256Hex(record.record_id), this.count) !== undefined) return;
    if (this.count === this.completedFlags.length) this.completedFlags = doubled(this.completedFlags);
    if (record.result.task_completed) {
      this.completedFlags[this.count] = 1;
      this.completed++;
    }
    this.count++;
  }

  /** The record's number (its order among the ids, from 0), or undefined when the file holds no such id. */
  numberOf(id: string): number | undefined {
    return this.numbers.get(sha256Hex(id));
  }

  isCompleted(number: number): boolean {
    return this.completedFlags[number] === 1;
  }
}

export class CardRecords {
  private readonly stats = new StatsAccumulator();
  private readonly lanes = new Map<string, { name: string; sha256: string; records: number; tasks: Set<string>; seeds: Set<number> }>();
  private readonly tasks = new Map<string, CardTask>();
  private readonly worlds = new Map<string, { name: string; version: string; tools: Set<string> }>();
  private readonly factoryVersions = new Set<string>();
  private readonly producedAt = new Set<string>();
  private readonly operations = new Map<string, number>();
  private readonly verifiedBy = new Map<string, number>();
  private example: RecordFacts['example'] = null;
  readonly ids = new RecordIds();

  static of(dataset: Dataset): CardRecords {
    const records = new CardRecords();
    for (const row of dataset.rows) records.add(row.record);
    return records;
  }

  /** Every record of the dataset's records file, streamed; an unreadable line or an id with two contents stops it. */
  static async read(dir: string, operation: string, options: PassOptions = {}): Promise<CardRecords> {
    const records = new CardRecords();
    await passOverDataset(dir, operation, ({ record }) => records.add(record), options);
    return records;
  }

  add(record: EpisodeRecord): void {
    this.stats.add(record);
    const lineage = record.provenance.lineage;
    // A lane edited between runs has a new hash: each (name, hash) is its own row.
    const laneKey = `${lineage.lane}\u0000${lineage.lane_sha256}`;
    let lane = this.lanes.get(laneKey);
    if (!lane) this.lanes.set(laneKey, (lane = { name: lineage.lane, sha256: lineage.lane_sha256, records: 0, tasks: new Set(), seeds: new Set() }));
    lane.records++;
    lane.tasks.add(lineage.task);
    lane.seeds.add(lineage.seed);
    if (!this.tasks.has(record.task.id)) this.tasks.set(record.task.id, { id: record.task.id, title: record.task.title, tags: [...record.task.tags] });
    const worldKey = `${record.world.name}@${record.world.version}`;
    let world = this.worlds.get(worldKey);
    if (!world) this.worlds.set(worldKey, (world = { name: record.world.name, version: record.world.version, tools: new Set<string>() }));
    for (const tool of record.tools) world.tools.add(tool.name);
    this.factoryVersions.add(lineage.factory_version);
    this.producedAt.add(record.provenance.produced_at);
    tally(this.operations, lineage.operation);
    tally(this.verifiedBy, record.result.verified_by);
    this.example ??= { record_id: record.record_id, generate_command: lineage.generate_command, replay_command: lineage.replay_command };
    this.ids.add(record);
  }

  /** The lanes the records name, sorted. */
  laneNames(): string[] {
    return sortedUnique([...this.lanes.values()].map((lane) => lane.name));
  }

  facts(): RecordFacts {
    return {
      stats: this.stats.finish([]),
      lanes: [...this.lanes.keys()].sort(compareKeys).map((key) => {
        const lane = this.lanes.get(key)!;
        return { name: lane.name, sha256: lane.sha256, records: lane.records, tasks: sortedUnique(lane.tasks), seeds: [...lane.seeds].sort((left, right) => left - right) };
      }),
      tasks: [...this.tasks.keys()].sort(compareKeys).map((key) => this.tasks.get(key)!),
      worlds: [...this.worlds.keys()].sort(compareKeys).map((key) => {
        const world = this.worlds.get(key)!;
        return { name: world.name, version: world.version, tools: sortedUnique(world.tools) };
      }),
      factory_versions: sortedUnique(this.factoryVersions),
      produced_at: sortedUnique(this.producedAt),
      operations: sortedRecord(this.operations),
      verified_by: sortedRecord(this.verifiedBy),
      example: this.example,
    };
  }
}
