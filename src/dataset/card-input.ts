// Owns what the dataset card says, gathered before any text is written: the
// statistics, lanes, tasks, worlds, files, splits and provenance of a dataset
// directory, read from its records (one at a time, through CardRecords) and
// the files beside them. Rendering is a pure function of this input.

import { existsSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { DATA_FILES_GLOB, EPISODES_FILE, recordFiles } from '../records/record-files.js';
import type { CardRecords, RecordFacts } from './card-records.js';
import { type CardSplit, readSplitLayout } from './split-layout.js';
import type { ExportFacts } from './export-configs.js';
import type { CardFacts } from './card-facts.js';
import { presentFiles, rejectedRows } from './card-files.js';
import { REJECTED_FILE } from './dataset-inputs.js';

export interface DatasetCardInput extends RecordFacts {
  /** The dataset directory's name. */
  name: string;
  /** Where the records are, as a loader's path: episodes.jsonl, or data/train-*.jsonl for a big dataset's files. */
  records_path: string;
  /** From split.json; absent when the directory has none, and then the records are the train split. */
  splits?: CardSplit[];
  test_fraction?: number | null;
  /** Files present in the directory, as named in KNOWN_FILES (a directory ends with "/"). */
  files: string[];
  /** Rows of rejected.jsonl, when the file is present. */
  rejected?: number | null;
  /** Of those, the episodes the model server cut short (stage infra). */
  infra_errors?: number;
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

export function configSplits(input: DatasetCardInput): CardSplit[] {
  return input.splits && input.splits.length > 0 ? input.splits : [{ name: 'train', path: input.records_path, rows: input.stats.records }];
}

/** Everything the card says about a dataset directory, read from it (with what readCardFacts found). */
export function datasetCardInput(dir: string, records: CardRecords, facts: Partial<CardFacts> = {}): DatasetCardInput {
  const layout = readSplitLayout(dir);
  const { stats, ...described } = records.facts();
  const input: DatasetCardInput = {
    stats,
    name: basename(resolve(dir)),
    ...described,
    records_path: recordFiles(dir).layout === 'single' ? EPISODES_FILE : DATA_FILES_GLOB,
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
