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
