import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mcnemarExact } from '../../src/statistics/mcnemar-test.js';

describe('exact McNemar test', () => {
  it('matches known exact p-values', () => {
    // 0 vs 5 discordant: 2 * (1/2)^5 = 0.0625; 1 vs 9: 2 * (1 + 10) / 1024; 3 vs 3: 1.
    assert.equal(mcnemarExact(0, 5).p_value, 0.0625);
    assert.ok(Math.abs(mcnemarExact(1, 9).p_value - 22 / 1024) < 1e-12);
    assert.equal(mcnemarExact(3, 3).p_value, 1);
    assert.ok(Math.abs(mcnemarExact(2, 10).p_value - (2 * (1 + 12 + 66)) / 4096) < 1e-12);
  });

  it('is symmetric, 1 with no discordant pairs, and refuses impossible counts', () => {
    assert.equal(mcnemarExact(7, 2).p_value, mcnemarExact(2, 7).p_value);
    assert.equal(mcnemarExact(0, 0).p_value, 1);
    assert.throws(() => mcnemarExact(-1, 2), RangeError);
    assert.ok(mcnemarExact(0, 200).p_value < 1e-50);
  });
});
