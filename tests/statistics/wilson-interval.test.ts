// Tests the Wilson score interval against published values and at its edges.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatRate, wilsonInterval } from '../../src/statistics/wilson-interval.js';

const round4 = (value: number) => Math.round(value * 1e4) / 1e4;

describe('wilsonInterval', () => {
  it('matches known 95% intervals to four decimals', () => {
    const cases: [number, number, number, number][] = [
      [0, 10, 0, 0.2775],
      [10, 10, 0.7225, 1],
      [8, 10, 0.4902, 0.9433],
      [5, 10, 0.2366, 0.7634],
      [1, 2, 0.0945, 0.9055],
      // 55/80, the faults sample's completion, worked by hand: centre 0.67891, half-width 0.09959.
      [55, 80, 0.5793, 0.7785],
    ];
    for (const [successes, n, low, high] of cases) {
      const rate = wilsonInterval(successes, n);
      assert.equal(round4(rate.low), low, `${successes}/${n} low`);
      assert.equal(round4(rate.high), high, `${successes}/${n} high`);
      assert.equal(rate.rate, successes / n);
      assert.equal(rate.successes, successes);
      assert.equal(rate.n, n);
    }
  });

  it('pins the bounds exactly at 0/n and n/n', () => {
    for (const n of [1, 3, 17, 1000]) {
      assert.equal(wilsonInterval(0, n).low, 0);
      assert.equal(wilsonInterval(n, n).high, 1);
      assert.ok(wilsonInterval(0, n).high > 0);
      assert.ok(wilsonInterval(n, n).low < 1);
    }
  });

  it('has no rate and the whole unit interval when n = 0', () => {
    assert.deepEqual(wilsonInterval(0, 0), { successes: 0, n: 0, rate: null, low: 0, high: 1 });
    assert.equal(formatRate(wilsonInterval(0, 0)), '- [0.000, 1.000] n=0');
  });

  it('contains the observed rate and narrows as n grows', () => {
    const small = wilsonInterval(7, 10);
    const large = wilsonInterval(700, 1000);
    for (const rate of [small, large]) assert.ok(rate.low < rate.rate! && rate.rate! < rate.high);
    assert.ok(large.high - large.low < small.high - small.low);
  });

  it('refuses impossible counts', () => {
    assert.throws(() => wilsonInterval(11, 10), RangeError);
    assert.throws(() => wilsonInterval(-1, 10), RangeError);
    assert.throws(() => wilsonInterval(1.5, 10), RangeError);
  });

  it('formats as rate [low, high] n=N', () => {
    assert.equal(formatRate(wilsonInterval(8, 10)), '0.800 [0.490, 0.943] n=10');
  });
});
