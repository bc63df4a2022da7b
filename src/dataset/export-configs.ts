// Owns the exports as named configs of a dataset directory: `export sft D`
// and `export dpo D` write D/sft/<split>.jsonl and D/dpo/<split>.jsonl, one
// file per split of the records (split.json's files, or episodes.jsonl as the
// train split), and the card lists them so that `load_dataset(D, "sft")`
// finds them. It also reads an export back for the card: its rows, the form
// of its arguments and whether it still matches the records it came from.

import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join, posix } from 'node:path';
import { isJsonObject } from '../core/json-value.js';
import { readLines } from '../records/jsonl.js';
import { readManifest } from '../records/manifest.js';
import type { ArgumentsForm } from '../records/chat-format.js';
import { assertDatasetDirectory, EPISODES_FILE, passOverDataset, streamDataset } from './dataset-reader.js';
import { RecordIds } from './card-records.js';
import { exportDpo, type DpoSummary } from './export-dpo.js';
import { exportSft, type SftOptions, type SftSummary } from './export-sft.js';
import { readSplitLayout } from './split-layout.js';

export const EXPORT_CONFIGS = ['sft', 'dpo'] as const;
export type ExportConfig = (typeof EXPORT_CONFIGS)[number];

/** A split of the records and the file that holds it. */
export interface RecordSplit {
  name: string;
  /** The records file, relative to the dataset directory. */
  file: string;
}

/** The records' splits: split.json's files when there is one, otherwise episodes.jsonl as train. */
export function recordSplits(dir: string): RecordSplit[] {
  const layout = readSplitLayout(dir);
  if (!layout) return [{ name: 'train', file: EPISODES_FILE }];
  return layout.splits.map((split) => ({ name: split.name, file: split.path }));
}

/** The export file of one split of a config, relative to the dataset directory. */
export function configFile(config: ExportConfig, split: string): string {
  return posix.join(config, `${split}.jsonl`);
}

export type SplitExport<Summary> = Summary & { split: string; path: string };

interface ExportedConfig<Config extends ExportConfig, Summary> {
  dir: string;
  config: Config;
  arguments: ArgumentsForm;
  splits: SplitExport<Summary>[];
  /** Export files of an earlier layout (a split that is gone) that were removed. */
  removed: string[];
}

export type SftConfigSummary = ExportedConfig<'sft', SftSummary>;
export type DpoConfigSummary = ExportedConfig<'dpo', DpoSummary>;
export type ConfigExportSummary = SftConfigSummary | DpoConfigSummary;

/**
 * Writes one export file per split into dir/<config>/, each moved into place
 * whole. Files of the same config that an earlier export wrote for a split
 * that no longer exists are removed, but only those the manifest lists:
 * nothing of the user's is touched.
 */
/** The progress callbacks of export options, alone. */
function progressOf(options: SftOptions): Pick<SftOptions, 'onProgress' | 'onStage'> {
  return { ...(options.onProgress ? { onProgress: options.onProgress } : {}), ...(options.onStage ? { onStage: options.onStage } : {}) };
}

export async function exportConfig(dir: string, config: 'sft', options?: SftOptions): Promise<SftConfigSummary>;
export async function exportConfig(dir: string, config: 'dpo', options?: SftOptions): Promise<DpoConfigSummary>;
export async function exportConfig(dir: string, config: ExportConfig, options?: SftOptions): Promise<ConfigExportSummary>;
export async function exportConfig(dir: string, config: ExportConfig, options: SftOptions = {}): Promise<ConfigExportSummary> {
  assertDatasetDirectory(dir);
  const splits = recordSplits(dir);
  mkdirSync(join(dir, config), { recursive: true });
  const paths: string[] = [];
  const sft: SplitExport<SftSummary>[] = [];
  const dpo: SplitExport<DpoSummary>[] = [];
  for (const split of splits) {
    const path = configFile(config, split.name);
    paths.push(path);
    if (config === 'sft') sft.push({ ...(await exportSft(dir, join(dir, path), { ...options, file: split.file })), split: split.name, path });
    else dpo.push({ ...(await exportDpo(dir, join(dir, path), { ...progressOf(options), arguments: options.arguments ?? 'string', file: split.file })), split: split.name, path });
  }
  const removed = (readManifest(dir)?.files ?? [])
    .map((file) => file.path)
    .filter((path) => path.startsWith(`${config}/`) && path.endsWith('.jsonl') && !path.slice(config.length + 1).includes('/') && !paths.includes(path))
    .filter((path) => existsSync(join(dir, path)));
  for (const path of removed) rmSync(join(dir, path));
  const common = { dir, arguments: options.arguments ?? 'string', removed };
  return config === 'sft' ? { ...common, config, splits: sft } : { ...common, config, splits: dpo };
}

/** What the card needs to know about one split of an export. */
export interface ExportSplitFacts {
  name: string;
  path: string;
  rows: number;
}

export interface ExportFacts {
  config: ExportConfig;
  splits: ExportSplitFacts[];
  /** "object" when any call's arguments are not a string. */
  arguments: ArgumentsForm;
  /** SFT rows rendered with --render carry a `text` column. */
  text: boolean;
}

export interface ExportProblem {
  config: ExportConfig;
  reason: string;
  fix: string;
}

function rerun(config: ExportConfig, dir: string): string {
  return `rerun \`episode-factory export ${config} ${dir}\` (after generate, dedup, merge or split), or delete ${join(dir, config)}`;
}

/**
 * Reads the exports present in dir (a config directory holding at least one
 * split file) and checks each against the records it came from: an export
 * whose rows name records that are gone, or that misses completed records, is
 * stale and reported, never described as data.
 */
export async function readExports(dir: string, episodes?: RecordIds): Promise<{ exports: ExportFacts[]; problems: ExportProblem[] }> {
  const exports: ExportFacts[] = [];
  const problems: ExportProblem[] = [];
  const splits = recordSplits(dir);
  // Each split's ids are read once for both configs; episodes.jsonl's not at all when the caller has them.
  const read = new Map<string, RecordIds>(episodes ? [[EPISODES_FILE, episodes]] : []);
  const idsOf = async (file: string): Promise<RecordIds> => {
    if (!read.has(file)) {
      const ids = new RecordIds();
      await passOverDataset(dir, 'described', ({ record }) => ids.add(record), { file });
      read.set(file, ids);
    }
    return read.get(file)!;
  };
  for (const config of EXPORT_CONFIGS) {
    const present = splits.filter((split) => existsSync(join(dir, configFile(config, split.name))));
    if (present.length === 0) continue;
    if (present.length < splits.length) {
      const missing = splits.filter((split) => !present.includes(split)).map((split) => configFile(config, split.name));
      problems.push({ config, reason: `${join(dir, config)} has no ${missing.join(', ')} for the records' current splits`, fix: rerun(config, dir) });
      continue;
    }
    const facts: ExportFacts = { config, splits: [], arguments: 'string', text: false };
    let stale: string | undefined;
    for (const split of splits) {
      const path = configFile(config, split.name);
      const known = await idsOf(split.file);
      let rows = 0;
      // The records the export names, by number: an SFT export must name every completed one.
      const seen = new Uint8Array(known.size);
      for await (const line of readLines(join(dir, path))) {
        if (!line.terminated || line.text.trim() === '') {
          stale ??= `${path}:${line.line} is torn or blank`;
          continue;
        }
        let row: unknown;
        try {
          row = JSON.parse(line.text);
        } catch {
          stale ??= `${path}:${line.line} is not valid JSON`;
          continue;
        }
        rows++;
        if (!isJsonObject(row)) {
          stale ??= `${path}:${line.line} is not a JSON object`;
          continue;
        }
        const ids = config === 'sft' ? [row.record_id] : [row.chosen_record_id, row.rejected_record_id];
        for (const id of ids) {
          const number = typeof id === 'string' ? known.numberOf(id) : undefined;
          if (number === undefined) stale ??= `${path}:${line.line} names record ${JSON.stringify(id)}, which ${split.file} does not hold`;
          else seen[number] = 1;
        }
        if (typeof row.text === 'string') facts.text = true;
        if (facts.arguments === 'string' && hasObjectArguments(row)) facts.arguments = 'object';
      }
      if (config === 'sft' && stale === undefined) {
        let left = 0;
        for (let number = 0; number < known.size; number++) if (known.isCompleted(number) && seen[number] !== 1) left++;
        if (left > 0) stale = `${path} lacks ${left} completed record${left === 1 ? '' : 's'} of ${split.file} (e.g. ${await firstMissing(dir, split.file, known, seen)})`;
      }
      facts.splits.push({ name: split.name, path, rows });
    }
    // An empty file is no split to a loader (datasets refuses a config with no rows): list only splits with rows.
    facts.splits = facts.splits.filter((split) => split.rows > 0);
    if (stale !== undefined) problems.push({ config, reason: `${join(dir, config)} does not match the records: ${stale}`, fix: rerun(config, dir) });
    else if (facts.splits.length > 0) exports.push(facts);
  }
  return { exports, problems };
}

/** The id of the first completed record an export lacks, read again from the records (the ids are kept as fingerprints only). */
async function firstMissing(dir: string, file: string, known: RecordIds, seen: Uint8Array): Promise<string> {
  for await (const entry of streamDataset(dir, file)) {
    if (entry.problem || !entry.row.record.result.task_completed) continue;
    const number = known.numberOf(entry.row.record.record_id);
    if (number !== undefined && seen[number] !== 1) return entry.row.record.record_id;
  }
  return 'one no longer in the file';
}

function hasObjectArguments(row: Record<string, unknown>): boolean {
  for (const column of ['messages', 'prompt', 'chosen', 'rejected']) {
    const messages = row[column];
    if (!Array.isArray(messages)) continue;
    for (const message of messages) {
      const calls = isJsonObject(message) ? message.tool_calls : undefined;
      if (!Array.isArray(calls)) continue;
      for (const call of calls) {
        const fn = isJsonObject(call) ? call.function : undefined;
        if (isJsonObject(fn) && fn.arguments !== undefined && typeof fn.arguments !== 'string') return true;
      }
    }
  }
  return false;
}
