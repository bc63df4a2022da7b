import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { substream } from '../../src/core/random.js';

const draw = (seed: number, label: string, count = 20) => {
  const random = substream(seed, label);
  return Array.from({ length: count }, () => random.next());
};

describe('seeded substreams', () => {
  it('repeat exactly for the same seed and label', () => {
    assert.deepEqual(draw(7, 'world'), draw(7, 'world'));
  });

  it('differ between labels and between seeds', () => {
    assert.notDeepEqual(draw(7, 'world'), draw(7, 'faults'));
    assert.notDeepEqual(draw(7, 'world'), draw(8, 'world'));
  });

  it('keep one label independent of how much another label drew', () => {
    const faults = substream(3, 'faults');
    const text = substream(3, 'text');
    for (let index = 0; index < 1000; index++) text.next();
    assert.equal(faults.next(), substream(3, 'faults').next());
  });

  it('draw integers inside inclusive bounds and reject bad bounds', () => {
    const random = substream(1, 'int');
    const seen = new Set<number>();
    for (let index = 0; index < 500; index++) {
      const value = random.int(2, 5);
      assert.ok(Number.isInteger(value) && value >= 2 && value <= 5);
      seen.add(value);
    }
    assert.deepEqual([...seen].sort(), [2, 3, 4, 5]);
    assert.throws(() => random.int(5, 2), RangeError);
  });

  it('pick, shuffle and sample without losing or inventing items', () => {
    const random = substream(2, 'lists');
    const items = ['a', 'b', 'c', 'd', 'e'];
    assert.deepEqual(random.shuffle(items).sort(), items);
    const sample = random.sample(items, 3);
    assert.equal(new Set(sample).size, 3);
    assert.ok(sample.every((item) => items.includes(item)));
    assert.throws(() => random.pick([]), RangeError);
  });

  it('weight picks by weight and never pick a zero weight', () => {
    const random = substream(4, 'weights');
    const counts = { heavy: 0, light: 0, never: 0 };
    for (let index = 0; index < 4000; index++) counts[random.weighted({ heavy: 3, light: 1, never: 0 })]++;
    assert.equal(counts.never, 0);
    assert.ok(counts.heavy > 2 * counts.light, JSON.stringify(counts));
    assert.throws(() => random.weighted({ none: 0 }), RangeError);
  });

  it('makes hex tokens of the asked length', () => {
    assert.match(substream(5, 'hex').hex(12), /^[0-9a-f]{12}$/);
  });
});

describe('weighted and hex draw as they always have', () => {
  // The original implementations, run on a twin stream: the same draws must give the same picks.
  const referenceWeighted = <K extends string>(source: () => number, weights: Readonly<Record<K, number>>): K => {
    const entries = (Object.keys(weights) as K[])
      .sort()
      .map((key) => [key, weights[key]] as const)
      .filter(([, weight]) => weight > 0);
    const total = entries.reduce((sum, [, weight]) => sum + weight, 0);
    if (entries.length === 0 || !(total > 0)) throw new RangeError('weighted pick needs a positive weight');
    let point = source() * total;
    for (const [key, weight] of entries) {
      point -= weight;
      if (point < 0) return key;
    }
    return entries[entries.length - 1]![0];
  };
  const referenceHex = (source: () => number, length: number): string => {
    let out = '';
    for (let index = 0; index < length; index++) out += Math.floor(source() * 16).toString(16);
    return out;
  };
  const outcome = (run: () => unknown) => {
    try {
      return run();
    } catch (error) {
      return `${(error as Error).name}: ${(error as Error).message}`;
    }
  };

  it('pick the same keys and digits from the same stream', () => {
    const tables: Record<string, number>[] = [
      { bug: 5, enhancement: 3, question: 2 }, { b: 1, a: 1 }, { z: 0, y: 2, x: -1 }, { only: 1 }, { a: 0.1, b: 0.2, c: 0.7 },
      { c: Number.NaN, b: 1e-300, a: 1e300 }, { a: Infinity, b: 1 }, { a: -5, b: 1, c: 1 }, { '10': 1, '9': 1, a: 2 }, { a: 0 }, {}, { a: -1, b: Number.NaN },
    ];
    const random = substream(9, 'weighted');
    const twin = substream(9, 'weighted');
    for (let round = 0; round < 3000; round++) {
      const table = tables[round % tables.length]!;
      assert.deepEqual(outcome(() => random.weighted(table)), outcome(() => referenceWeighted(() => twin.next(), table)), JSON.stringify(table));
      assert.equal(random.hex(round % 9), referenceHex(() => twin.next(), round % 9));
    }
  });
});
