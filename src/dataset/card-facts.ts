// Owns what the lanes and the exports add to the dataset card: the license
// and task categories each lane's dataset_card sets (and whether they agree),
// the current SFT and DPO exports, and every reason the card is not fit to
// publish.

import type { CardRecords } from './card-records.js';
import type { PassOptions } from './dataset-reader.js';
import { type ExportFacts, readExports } from './export-configs.js';
import { code } from './card-text.js';

export interface CardOptions {
  /** Called now and then as the records are read. */
  onProgress?: PassOptions['onProgress'];
  /** A Hugging Face license id (mit, apache-2.0, cc-by-4.0, ...); overrides the lanes' dataset_card.license. */
  license?: string;
  /** Write the card even when it is not fit to publish (no license, a stale export), with placeholders and warnings. */
  draft?: boolean;
  /**
   * Each lane's dataset_card (license, task categories), looked up by name;
   * given by the caller, since finding lanes is not the dataset layer's job.
   * Without it no lane is read, and only --license sets the license.
   */
  laneCards?: (names: readonly string[]) => Map<string, LaneCardLookup>;
}

/** What a lane says for the card: the fields it sets (none when it has no dataset_card), or why it could not be read. */
export type LaneCardLookup = { card: LaneCardFields | undefined } | { error: string };

/** A lane's dataset_card, as schemas/lane.v1.schema.json has it. */
export interface LaneCardFields {
  license: string;
  license_name?: string;
  license_link?: string;
  task_categories?: string[];
}

/** What the lanes and exports add to the card, and what keeps it from being published. */
export interface CardFacts {
  license?: string;
  license_name?: string;
  license_link?: string;
  license_source?: string;
  task_categories?: string[];
  exports: ExportFacts[];
  /** Reasons the card is only a draft, each with its fix. */
  problems: { reason: string; fix: string }[];
}

/** Reads each lane's dataset_card (by name, as replay finds lanes) and the exports beside the records. */
export async function readCardFacts(dir: string, records: CardRecords, options: CardOptions = {}): Promise<CardFacts> {
  const facts: CardFacts = { exports: [], problems: [] };
  const names = records.laneNames();
  const cards = new Map<string, LaneCardFields | undefined>();
  const unreadable: string[] = [];
  const looked = options.laneCards?.(names) ?? new Map<string, LaneCardLookup>(names.map((name) => [name, { error: 'no lane lookup was given' }]));
  for (const name of names) {
    const lookup = looked.get(name) ?? { error: 'not looked up' };
    if ('error' in lookup) unreadable.push(`${name} (${lookup.error})`);
    else cards.set(name, lookup.card);
  }
  const categories = [...cards.values()].flatMap((card) => card?.task_categories ?? []);
  if (categories.length > 0) facts.task_categories = [...new Set(categories)];
  if (options.license !== undefined) {
    facts.license = options.license;
    facts.license_source = '--license';
  } else {
    const licensed = [...cards.entries()].filter((entry): entry is [string, LaneCardFields] => entry[1] !== undefined);
    const distinct = new Map(licensed.map(([name, card]) => [canonicalLicense(card), { name, card }]));
    const fix = 'set "dataset_card": {"license": "<id>"} in the lane (e.g. mit, apache-2.0, cc-by-4.0), or pass --license <id>; --draft writes a card that is not for publishing';
    if (unreadable.length > 0) facts.problems.push({ reason: `cannot read lane ${unreadable.join(', ')} for its dataset_card.license`, fix: `pass --lane <file>, ${fix}` });
    const unset = names.filter((name) => cards.has(name) && cards.get(name) === undefined);
    if (unset.length > 0) facts.problems.push({ reason: `lane ${unset.join(', ')} sets no dataset_card.license`, fix });
    if (distinct.size > 1) {
      facts.problems.push({
        reason: `the lanes disagree on the license (${licensed.map(([name, card]) => `${name}: ${card.license}`).join(', ')})`,
        fix: 'pass --license <id> with the license of the combined dataset',
      });
    } else if (distinct.size === 1 && facts.problems.length === 0) {
      const { name, card } = [...distinct.values()][0]!;
      facts.license = card.license;
      if (card.license_name !== undefined) facts.license_name = card.license_name;
      if (card.license_link !== undefined) facts.license_link = card.license_link;
      facts.license_source = licensed.length === 1 ? `lane ${code(name)}` : `its lanes`;
    }
    if (facts.license === undefined && facts.problems.length === 0) facts.problems.push({ reason: 'the records name no lane, so no lane sets the license', fix });
  }
  const { exports, problems } = await readExports(dir, records.ids);
  facts.exports = exports;
  for (const problem of problems) facts.problems.push({ reason: problem.reason, fix: problem.fix });
  return facts;
}

function canonicalLicense(card: LaneCardFields): string {
  return JSON.stringify([card.license, card.license_name ?? null, card.license_link ?? null]);
}
