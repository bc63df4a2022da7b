// Owns writing a dataset's HTML report: gather the data, render the page,
// write it atomically (a crash leaves the previous report or none, never half
// of one), and list it in the dataset's manifest when it lands inside the
// dataset directory, so an audit still finds every file accounted for. The
// files it reads are checked against the manifest first: a report never
// shows tampered records as the run's.

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { FactoryError } from '../core/errors.js';
import { writeFileAtomically } from '../records/atomic-file.js';
import { MANIFEST_FILE } from '../records/manifest.js';
import { beginDatasetUpdate, checkInputs, describedInputs } from './dataset-inputs.js';
import { assertDatasetDirectory, type DatasetProblem } from './dataset-reader.js';
import { gatherReportData } from './report-data.js';
import type { ReportDataOptions } from './report-model.js';
import { renderReport } from './report-page.js';

export const REPORT_FILE = 'report.html';

export interface ReportSummary {
  path: string;
  bytes: number;
  sha256: string;
  records: number;
  /** Episodes the viewer embeds, and whether they are a sample of the records. */
  embedded: number;
  sampled: boolean;
  /** Unreadable lines (and record_ids that hold two contents), left out of the report and listed in it. */
  problems: number;
  /** The first of them, as the report lists them. */
  problem_examples: DatasetProblem[];
  rejected: number | null;
  duplicates_dropped: number | null;
  /** True when the report is inside the dataset directory and its manifest now lists it. */
  in_manifest: boolean;
  /** Set when the directory has no manifest, so nothing vouched for the records shown. */
  warning?: string;
}

export interface WriteReportOptions extends ReportDataOptions {
  /** Where to write; default <dir>/report.html. */
  out?: string;
}

function insideDirectory(root: string, path: string): boolean {
  const relation = relative(resolve(root), resolve(path));
  return relation !== '' && !relation.startsWith('..') && !relation.startsWith(sep) && !relation.split(sep).some((part) => part.startsWith('.'));
}

export async function writeReport(dir: string, options: WriteReportOptions = {}): Promise<ReportSummary> {
  assertDatasetDirectory(dir);
  const out = options.out ?? join(dir, REPORT_FILE);
  if (existsSync(out) && statSync(out).isDirectory()) {
    throw new FactoryError('usage', `--out ${out} is a directory`, { fix: `name the file, e.g. --out ${join(out, REPORT_FILE)}` });
  }
  const inputs = describedInputs(dir);
  const named = relative(resolve(dir), resolve(out)).split(sep).join('/');
  if (inputs.includes(named)) {
    throw new FactoryError('usage', `--out ${out} is ${named}, a file the report reads`, { fix: `write the report elsewhere, e.g. --out ${join(dir, REPORT_FILE)}` });
  }
  const listed = insideDirectory(dir, out) && existsSync(join(dir, MANIFEST_FILE));
  const update = listed
    ? await beginDatasetUpdate(dir, 'report', { inputs, outputs: [named], recordOperation: false })
    : undefined;
  const { warning } = update ? { warning: undefined } : await checkInputs(dir, 'report', inputs);
  const data = await gatherReportData(dir, options);
  const page = renderReport(data);
  mkdirSync(dirname(resolve(out)), { recursive: true });
  writeFileAtomically(out, page);
  const bytes = Buffer.byteLength(page, 'utf8');
  if (update) await update.commit();
  return {
    path: out,
    bytes,
    sha256: createHash('sha256').update(page, 'utf8').digest('hex'),
    records: data.overview.records,
    embedded: data.viewer.entries.length,
    sampled: data.viewer.sampled,
    problems: data.overview.problems,
    problem_examples: data.overview.problem_examples,
    rejected: data.overview.rejected,
    duplicates_dropped: data.overview.duplicates_dropped,
    in_manifest: update !== undefined,
    ...(warning === undefined ? {} : { warning }),
  };
}
