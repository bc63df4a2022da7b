// Owns the dataset card: the README.md of a dataset directory in the Hugging
// Face form (YAML front matter with configs and splits, then purpose, files,
// schema, generation, provenance, statistics, limitations). It is rendered
// from the records and the files beside them, never written by hand, so every
// number in it is one the data holds and regenerating it gives the same bytes.
// Its sections are written by the card-*.ts modules; this one puts them in
// order and writes the file.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FactoryError } from '../core/errors.js';
import { type CardOptions, readCardFacts } from './card-facts.js';
import { datasetCardInput, type DatasetCardInput } from './card-input.js';
import { CardRecords } from './card-records.js';
import { frontMatter } from './card-front-matter.js';
import { exportsSection, filesSection, introduction, purpose, schemaSection } from './card-data-sections.js';
import { generationSection, licenseSection, limitationsSection, provenanceSection, statisticsSection } from './card-provenance-sections.js';

export const CARD_FILE = 'README.md';

/** The whole README.md; a pure function of its input. */
export function renderDatasetCard(input: DatasetCardInput): string {
  return [
    frontMatter(input),
    introduction(input),
    purpose(input),
    filesSection(input),
    exportsSection(input),
    schemaSection(input),
    generationSection(input),
    provenanceSection(input),
    statisticsSection(input),
    limitationsSection(input),
    licenseSection(input),
  ].join('\n');
}

const LICENSE_ID = /^[a-z0-9][a-z0-9.+-]*$/;

export interface CardResult {
  path: string;
  /** Why the card written with --draft is not fit to publish; empty otherwise. */
  draft: { reason: string; fix: string }[];
}

/**
 * Reads the dataset, renders its card and writes dir/README.md. A card that
 * is not fit to publish (no license, lanes that disagree on it, an export
 * that no longer matches the records) is not written, unless asked for as a
 * draft: the placeholder must never reach a published card unnoticed.
 */
export async function writeDatasetCard(dir: string, options: CardOptions = {}): Promise<CardResult> {
  if (options.license !== undefined && !LICENSE_ID.test(options.license)) {
    throw new FactoryError('usage', `--license ${JSON.stringify(options.license)} is not a license id`, {
      fix: 'pass a lowercase Hugging Face license id such as mit, apache-2.0 or cc-by-4.0',
    });
  }
  // A card says how many records were verified: it is never written over lines that could not be read or an id with two contents.
  const records = await CardRecords.read(dir, 'described (no card was written)', options.onProgress ? { onProgress: options.onProgress } : {});
  const facts = await readCardFacts(dir, records, options);
  if (facts.problems.length > 0 && !options.draft) {
    const [first] = facts.problems;
    throw new FactoryError('card_not_publishable', `card ${dir}: not written: ${first!.reason}${facts.problems.length > 1 ? ` (and ${facts.problems.length - 1} more, listed above)` : ''}`, {
      fix: first!.fix,
      problems: facts.problems.length > 1 ? facts.problems.map((problem) => ({ where: dir, reason: `${problem.reason} — fix: ${problem.fix}` })) : [],
    });
  }
  const path = join(dir, CARD_FILE);
  writeFileSync(path, renderDatasetCard(datasetCardInput(dir, records, facts)));
  return { path, draft: facts.problems };
}
