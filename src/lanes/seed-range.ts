// Owns the `A..B` seed range syntax shared by lane files and the CLI.

import { FactoryError } from '../core/errors.js';
import type { SeedRange } from './lane.js';

export function parseSeedRange(text: string, where = '--seeds'): SeedRange {
  const match = /^\s*([0-9]{1,9})\s*\.\.\s*([0-9]{1,9})\s*$/.exec(text) ?? /^\s*([0-9]{1,9})\s*$/.exec(text);
  if (!match) {
    throw new FactoryError('usage', `${where}: "${text}" is not a seed range`, { fix: 'write it as A..B, e.g. 0..7 (both inclusive), or a single seed' });
  }
  const from = Number(match[1]);
  const to = Number(match[2] ?? match[1]);
  if (to < from) throw new FactoryError('usage', `${where}: "${text}" ends before it starts`, { fix: `write ${to}..${from}` });
  return { from, to };
}

export function formatSeedRange(range: SeedRange): string {
  return `${range.from}..${range.to}`;
}

export function seedsOf(range: SeedRange): number[] {
  const seeds: number[] = [];
  for (let seed = range.from; seed <= range.to; seed++) seeds.push(seed);
  return seeds;
}
