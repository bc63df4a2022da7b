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
import { assertDatasetDirectory, EPISODES_FILE, passOverDataset } from './dataset-reader.js';
import { addRecordId, type RecordIds } from './card-records.js';
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
      const ids: RecordIds = { known: new Set(), completed: new Set() };
      await passOverDataset(dir, 'described', ({ record }) => addRecordId(ids, record), { file });
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
      const { known, completed } = await idsOf(split.file);
      let rows = 0;
      const seen = new Set<string>();
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
          if (typeof id !== 'string' || !known.has(id)) stale ??= `${path}:${line.line} names record ${JSON.stringify(id)}, which ${split.file} does not hold`;
          else seen.add(id);
        }
        if (typeof row.text === 'string') facts.text = true;
        if (facts.arguments === 'string' && hasObjectArguments(row)) facts.arguments = 'object';
      }
      if (config === 'sft' && stale === undefined) {
        const left = [...completed].filter((id) => !seen.has(id));
        if (left.length > 0) stale = `${path} lacks ${left.length} completed record${left.length === 1 ? '' : 's'} of ${split.file} (e.g. ${left[0]})`;
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
