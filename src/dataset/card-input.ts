// Owns what the dataset card says, gathered before any text is written: the
// statistics, lanes, tasks, worlds, files, splits and provenance of a dataset
// directory, read from its records and the files beside them. Rendering is a
// pure function of this input.

import { existsSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { EpisodeRecord } from '../records/episode-record.js';
import { type Dataset, EPISODES_FILE } from './dataset-reader.js';
import { compareKeys, sortedRecord } from './key-order.js';
import { computeStats, type DatasetStats } from './dataset-stats.js';
import { type CardSplit, readSplitLayout } from './split-layout.js';
import type { ExportFacts } from './export-configs.js';
import type { CardFacts } from './card-facts.js';
import { presentFiles, rejectedRows } from './card-files.js';
import { REJECTED_FILE } from './dataset-inputs.js';

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

export interface DatasetCardInput {
  stats: DatasetStats;
  /** The dataset directory's name. */
  name: string;
  lanes: CardLane[];
  tasks: CardTask[];
  worlds: CardWorld[];
  /** From split.json; absent when the directory has none, and then episodes.jsonl is the train split. */
  splits?: CardSplit[];
  test_fraction?: number | null;
  /** Files present in the directory, as named in KNOWN_FILES (a directory ends with "/"). */
  files: string[];
  /** Rows of rejected.jsonl, when the file is present. */
  rejected?: number | null;
  /** Of those, the episodes the model server cut short (stage infra). */
  infra_errors?: number;
  /** lineage.factory_version of the records. */
  factory_versions: string[];
  produced_at: string[];
  /** Records by lineage.operation (generate, dedup, merge, ...). */
  operations: Record<string, number>;
  /** Records by result.verified_by. */
  verified_by: Record<string, number>;
  /** Commands from the first record's lineage, to show how one record is regenerated and replayed. */
  example: { record_id: string; generate_command: string; replay_command: string } | null;
  /** A license id to put in the front matter instead of the placeholder (only a draft has none). */
  license?: string;
  /** With license "other": its short id and where its text is. */
  license_name?: string;
  license_link?: string;
  /** Where the license came from, for the card's License section: "lane <name>" or "--license". */
  license_source?: string;
  /** From the lanes' dataset_card; default text-generation. */
  task_categories?: string[];
  /** The exports present and current (export sft/dpo into the directory): each is a config. */
  exports?: ExportFacts[];
}

function sortedUnique(values: Iterable<string>): string[] {
  return [...new Set(values)].sort(compareKeys);
}

function tally(values: Iterable<string>): Record<string, number> {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return sortedRecord(counts);
}

/** Lanes, tasks, worlds and provenance facts the card needs beyond the statistics, from the records. */
function describeRecords(records: readonly EpisodeRecord[]): Pick<
  DatasetCardInput,
  'lanes' | 'tasks' | 'worlds' | 'factory_versions' | 'produced_at' | 'operations' | 'verified_by' | 'example'
> {
  const lanes = new Map<string, CardLane>();
  const tasks = new Map<string, CardTask>();
  const worlds = new Map<string, { name: string; version: string; tools: Set<string> }>();
  for (const record of records) {
    const lineage = record.provenance.lineage;
    // A lane edited between runs has a new hash: each (name, hash) is its own row.
    const laneKey = `${lineage.lane}\u0000${lineage.lane_sha256}`;
    const lane = lanes.get(laneKey) ?? { name: lineage.lane, sha256: lineage.lane_sha256, records: 0, tasks: [], seeds: [] };
    lane.records++;
    lane.tasks.push(lineage.task);
    lane.seeds.push(lineage.seed);
    lanes.set(laneKey, lane);
    if (!tasks.has(record.task.id)) tasks.set(record.task.id, { id: record.task.id, title: record.task.title, tags: [...record.task.tags] });
    const worldKey = `${record.world.name}@${record.world.version}`;
    const world = worlds.get(worldKey) ?? { name: record.world.name, version: record.world.version, tools: new Set<string>() };
    for (const tool of record.tools) world.tools.add(tool.name);
    worlds.set(worldKey, world);
  }
  const first = records[0];
  return {
    lanes: [...lanes.keys()].sort(compareKeys).map((key) => {
      const lane = lanes.get(key)!;
      return { ...lane, tasks: sortedUnique(lane.tasks), seeds: [...new Set(lane.seeds)].sort((left, right) => left - right) };
    }),
    tasks: [...tasks.keys()].sort(compareKeys).map((key) => tasks.get(key)!),
    worlds: [...worlds.keys()].sort(compareKeys).map((key) => {
      const world = worlds.get(key)!;
      return { name: world.name, version: world.version, tools: sortedUnique(world.tools) };
    }),
    factory_versions: sortedUnique(records.map((record) => record.provenance.lineage.factory_version)),
    produced_at: sortedUnique(records.map((record) => record.provenance.produced_at)),
    operations: tally(records.map((record) => record.provenance.lineage.operation)),
    verified_by: tally(records.map((record) => record.result.verified_by)),
    example: first
      ? {
          record_id: first.record_id,
          generate_command: first.provenance.lineage.generate_command,
          replay_command: first.provenance.lineage.replay_command,
        }
      : null,
  };
}

export function configSplits(input: DatasetCardInput): CardSplit[] {
  return input.splits && input.splits.length > 0 ? input.splits : [{ name: 'train', path: EPISODES_FILE, rows: input.stats.records }];
}

/** Everything the card says about a dataset directory, read from it (with what readCardFacts found). */
export function datasetCardInput(dir: string, dataset: Dataset, facts: Partial<CardFacts> = {}): DatasetCardInput {
  const layout = readSplitLayout(dir);
  const input: DatasetCardInput = {
    stats: computeStats(dataset),
    name: basename(resolve(dir)),
    ...describeRecords(dataset.rows.map((row) => row.record)),
    files: presentFiles(dir, layout?.splits),
    rejected: null,
  };
  if (existsSync(join(dir, REJECTED_FILE))) {
    const rows = rejectedRows(join(dir, REJECTED_FILE));
    input.rejected = rows.length;
    const infra = rows.filter((row) => row === 'infra').length;
    if (infra > 0) input.infra_errors = infra;
  }
  if (layout) {
    input.splits = layout.splits;
    input.test_fraction = layout.test_fraction;
  }
  for (const key of ['license', 'license_name', 'license_link', 'license_source', 'task_categories', 'exports'] as const) {
    if (facts[key] !== undefined) (input as unknown as Record<string, unknown>)[key] = facts[key];
  }
  return input;
}
