// Owns seeded randomness. Every random choice that can reach a record comes
// from a substream named by a label, seeded by sha256(seed, label), so adding a
// draw to one concern (say, text) never shifts the draws of another (say, faults).

import seedrandom from 'seedrandom';
import { sha256Hex } from './hashing.js';

export interface Random {
  /** Uniform float in [0, 1). */
  next(): number;
  /** Uniform integer in [min, max], both inclusive. */
  int(min: number, max: number): number;
  chance(probability: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** A shuffled copy; the input is not touched. */
  shuffle<T>(items: readonly T[]): T[];
  /** `count` distinct items, in draw order. */
  sample<T>(items: readonly T[], count: number): T[];
  /** Picks a key with probability proportional to its weight. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K;
  hex(length: number): string;
  /** `count` distinct integers in [min, max], in draw order (ids that must not collide). */
  distinctIntegers(count: number, min: number, max: number): number[];
}

export function substream(seed: number | string, label: string): Random {
  const generator = seedrandom.xor4096(sha256Hex(`${seed}\u0000${label}`));
  return wrap(() => generator.double());
}

/** A Random drawing from `source` (uniform in [0, 1)): e.g. a recorded sequence of another's draws, played again. */
export function randomFrom(source: () => number): Random {
  return wrap(source);
}

/** What (n).toString(16) prints for 0..15. */
const HEX_DIGITS = '0123456789abcdef';

function wrap(source: () => number): Random {
  const random: Random = {
    next: source,
    int(min, max) {
      if (!Number.isInteger(min) || !Number.isInteger(max) || max < min) {
        throw new RangeError(`int(${min}, ${max}): bounds must be integers with min <= max`);
      }
      return min + Math.floor(source() * (max - min + 1));
    },
    chance(probability) {
      return source() < probability;
    },
    pick(items) {
      if (items.length === 0) throw new RangeError('pick from an empty list');
      return items[Math.floor(source() * items.length)] as (typeof items)[number];
    },
    shuffle(items) {
      const copy = items.slice();
      for (let index = copy.length - 1; index > 0; index--) {
        const other = Math.floor(source() * (index + 1));
        [copy[index], copy[other]] = [copy[other]!, copy[index]!];
      }
      return copy;
    },
    sample(items, count) {
      if (count > items.length) throw new RangeError(`sample ${count} from ${items.length} items`);
      return random.shuffle(items).slice(0, count);
    },
    weighted(weights) {
      // Keys in sorted order, positive weights only, summed in that order.
      const keys = (Object.keys(weights) as (keyof typeof weights)[]).sort();
      let total = 0;
      let last: (typeof keys)[number] | undefined;
      for (const key of keys) {
        const weight = weights[key];
        if (weight > 0) {
          total += weight;
          last = key;
        }
      }
      if (last === undefined || !(total > 0)) throw new RangeError('weighted pick needs a positive weight');
      let point = source() * total;
      for (const key of keys) {
        const weight = weights[key];
        if (!(weight > 0)) continue;
        point -= weight;
        if (point < 0) return key;
      }
      return last;
    },
    distinctIntegers(count, min, max) {
      if (count > max - min + 1) throw new RangeError(`distinctIntegers(${count}, ${min}, ${max}): the range holds fewer than ${count} integers`);
      const drawn = new Set<number>();
      while (drawn.size < count) drawn.add(random.int(min, max));
      return [...drawn];
    },
    hex(length) {
      let out = '';
      for (let index = 0; index < length; index++) out += HEX_DIGITS[Math.floor(source() * 16)];
      return out;
    },
  };
  return random;
}
