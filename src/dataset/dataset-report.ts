// Owns writing a dataset's HTML report: gather the data, render the page,
// write it atomically (a crash leaves the previous report or none, never half
// of one), and list it in the dataset's manifest when it lands inside the
// dataset directory, so an audit still finds every file accounted for.

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { FactoryError } from '../core/errors.js';
import { writeFileAtomically } from '../records/atomic-file.js';
import { addFileToManifest } from '../records/manifest.js';
import { assertDatasetDirectory } from './dataset-reader.js';
import { gatherReportData, type ReportDataOptions } from './report-data.js';
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
  /** Unreadable lines, left out of the report and listed in it. */
  problems: number;
  rejected: number | null;
  duplicates_dropped: number | null;
  /** True when the report is inside the dataset directory and its manifest now lists it. */
  in_manifest: boolean;
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
  const data = await gatherReportData(dir, options);
  const page = renderReport(data);
  mkdirSync(dirname(resolve(out)), { recursive: true });
  writeFileAtomically(out, page);
  const bytes = Buffer.byteLength(page, 'utf8');
  const inManifest = insideDirectory(dir, out) ? await addFileToManifest(dir, out) : false;
  return {
    path: out,
    bytes,
    sha256: createHash('sha256').update(page, 'utf8').digest('hex'),
    records: data.overview.records,
    embedded: data.viewer.entries.length,
    sampled: data.viewer.sampled,
    problems: data.overview.problems,
    rejected: data.overview.rejected,
    duplicates_dropped: data.overview.duplicates_dropped,
    in_manifest: inManifest,
  };
}
