// Owns what the card knows of a dataset directory's files: which files a
// directory may hold and what each is, in the card's words, which of them are
// present, and the stage of each row of rejected.jsonl.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ARROW_FILE, PARQUET_FILE } from '../records/columnar-names.js';
import { MANIFEST_FILE } from '../records/manifest.js';
import { REJECTED_FILE } from './dataset-inputs.js';
import { EPISODES_FILE } from './dataset-reader.js';
import { DATA_DIRECTORY } from '../records/record-files.js';
import { SPLIT_FILE } from './dataset-split.js';
import { DEDUP_REPORT_FILE, DROPPED_FILE } from './dedup.js';
import type { CardSplit } from './split-layout.js';

/** The runner's folder of trace archives (runner/trace-archive.ts), which the dataset layer may not import. */
const TRACES_DIR = 'traces';

/** What each file a dataset directory may hold is, in the card's words. */
export const KNOWN_FILES: readonly (readonly [string, string])[] = [
  [EPISODES_FILE, 'every verified record, one JSON object per line'],
  [DATA_DIRECTORY + '/', 'every verified record, in several files named as the Hugging Face Hub expects (`train-00000-of-00004.jsonl`, and the `.parquet` and `.arrow` copy of each): a dataset past the size bound of one file'],
  [PARQUET_FILE, 'the same records as Parquet'],
  [ARROW_FILE, 'the same records as Arrow IPC'],
  [REJECTED_FILE, 'episodes that did not verify, with the stage and the reason (not training data)'],
  [SPLIT_FILE, 'the split layout: which file holds which split, and its tasks'],
  [DROPPED_FILE, 'records dedup dropped, each with the reason and the record it duplicates (not training data)'],
  [DEDUP_REPORT_FILE, 'the dedup settings and counts'],
  ['report.html', 'the HTML report: overview, plots and an episode viewer (`episode-factory report`); open it in a browser'],
  ['sft/', 'SFT rows, one file per split (`episode-factory export sft`; the `sft` config when current, see Training exports)'],
  ['dpo/', 'DPO pairs, one file per split (`episode-factory export dpo`; the `dpo` config when current, see Training exports)'],
  [MANIFEST_FILE, 'every file with its sha256, size and row count'],
  [TRACES_DIR + '/', 'one trace archive per part of the run: generation, replay and verification events of each episode, with wall-clock timings; `index.jsonl` names the archive of every record id'],
];

/** The known files present, in KNOWN_FILES order, plus split files, so the card never describes what is not there. */
export function presentFiles(dir: string, splits: readonly CardSplit[] = []): string[] {
  const entries = new Set(readdirSync(dir));
  const files: string[] = [];
  for (const [name] of KNOWN_FILES) {
    const bare = name.endsWith('/') ? name.slice(0, -1) : name;
    if (!entries.has(bare)) continue;
    if (name.endsWith('/') !== statSync(join(dir, bare)).isDirectory()) continue;
    files.push(name);
  }
  for (const split of splits) if (!files.includes(split.path)) files.push(split.path);
  return files;
}

/** The stage of every row of rejected.jsonl (null for a line that is not a row). */
export function rejectedRows(path: string): (string | null)[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        const row: unknown = JSON.parse(line);
        const stage = typeof row === 'object' && row !== null ? (row as { stage?: unknown }).stage : undefined;
        return typeof stage === 'string' ? stage : null;
      } catch {
        return null;
      }
    });
}
