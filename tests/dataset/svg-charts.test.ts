// Tests the report's SVG charts: marks carry the numbers they draw, bars are
// scaled to them, axes have ticks and titles with units, text is escaped, and
// an empty series says so instead of drawing an empty frame.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { countAxis, faultChart, histogramChart, rateChart, rateText } from '../../src/dataset/svg-charts.js';
import { wilsonInterval } from '../../src/statistics/wilson-interval.js';

function attributes(svg: string, selector: RegExp): Record<string, string>[] {
  return [...svg.matchAll(selector)].map((match) => Object.fromEntries([...match[0].matchAll(/([a-z-]+)="([^"]*)"/g)].map((pair) => [pair[1]!, pair[2]!])));
}

describe('countAxis', () => {
  it('rounds the top up to a multiple of a 1-2-5 step with about five ticks', () => {
    assert.deepEqual(countAxis(0), { top: 1, step: 1 });
    assert.deepEqual(countAxis(3), { top: 3, step: 1 });
    assert.deepEqual(countAxis(7), { top: 8, step: 2 });
    assert.deepEqual(countAxis(11), { top: 15, step: 5 });
    assert.deepEqual(countAxis(39), { top: 40, step: 10 });
    assert.deepEqual(countAxis(12345), { top: 15000, step: 5000 });
  });
});

describe('rateChart', () => {
  const rows = [
    { key: 'find<bugs>', label: 'find<bugs>', rate: wilsonInterval(3, 4), filter: { name: 'task', value: 'find<bugs>' } },
    { key: 'none', label: 'none', rate: wilsonInterval(0, 0) },
    { key: 'all', label: 'all', rate: wilsonInterval(5, 5) },
  ];
  const svg = rateChart({ id: 'task-completion', title: 'T', caption: 'C', axisTitle: 'episodes completed (%)', rows, empty: 'nothing' });

  it('puts each rate on its row as data and scales the bar to it', () => {
    const marks = attributes(svg, /<g class="row"[^>]*>/g);
    assert.deepEqual(marks.map((mark) => [mark['data-key'], mark['data-successes'], mark['data-n']]), [
      ['find&lt;bugs&gt;', '3', '4'],
      ['none', '0', '0'],
      ['all', '5', '5'],
    ]);
    const bars = attributes(svg, /<rect class="bar"[^>]*>/g).map((bar) => Number(bar.width));
    assert.equal(bars.length, 2, 'no bar for a row without episodes');
    assert.ok(Math.abs(bars[0]! / bars[1]! - 0.75) < 0.01, `${bars[0]} / ${bars[1]}`);
    assert.equal(marks[0]!['data-filter'], 'task');
  });

  it('draws the interval, the axis ticks and titles, and escapes labels', () => {
    assert.equal((svg.match(/class="interval"/g) ?? []).length, 2);
    for (const tick of ['0%', '20%', '40%', '60%', '80%', '100%']) assert.ok(svg.includes(`>${tick}</text>`), tick);
    assert.ok(svg.includes('episodes completed (%)</text>'));
    assert.ok(svg.includes(rateText(wilsonInterval(3, 4))));
    assert.ok(!svg.includes('<bugs>'));
    assert.match(rateText(wilsonInterval(3, 4)), /^3\/4 · 75% \[\d+%, \d+%\]$/);
  });

  it('says when there is nothing to draw', () => {
    const empty = rateChart({ id: 'x', title: 'T', caption: 'C', axisTitle: 'A', rows: [], empty: 'No records.' });
    assert.ok(empty.includes('<p class="empty">No records.</p>'));
    assert.ok(!empty.includes('<svg'));
  });
});

describe('faultChart', () => {
  it('splits each kind into recovered and not, on a count axis', () => {
    const svg = faultChart('faults', 'F', 'C', [
      { kind: 'timeout', fired: 12, recovered: wilsonInterval(6, 10) },
      { kind: 'transient', fired: 4, recovered: wilsonInterval(4, 4) },
    ]);
    const marks = attributes(svg, /<g class="row"[^>]*>/g);
    assert.deepEqual(marks.map((mark) => [mark['data-key'], mark['data-fired'], mark['data-episodes'], mark['data-recovered']]), [
      ['timeout', '12', '10', '6'],
      ['transient', '4', '4', '4'],
    ]);
    const rows = svg.split('<g class="row"').slice(1);
    const widths = rows.flatMap((row) => attributes(row, /<rect class="bar (?:un)?recovered"[^>]*>/g).map((bar) => Number(bar.width)));
    // timeout: 6 recovered + 4 not; transient: 4 + 0; the axis tops at 10.
    assert.deepEqual(widths.map((width) => Math.round((width / widths[0]!) * 6)), [6, 4, 4, 0]);
    assert.ok(svg.includes('episodes the fault fired in (count)'));
    assert.ok(faultChart('faults', 'F', 'C', []).includes('No fault fired'));
  });
});

describe('histogramChart', () => {
  it('draws a bar per bin with its count and both axis titles', () => {
    const svg = histogramChart({
      id: 'error-turns',
      title: 'E',
      caption: 'C',
      xTitle: 'error turns per episode (count)',
      yTitle: 'episodes',
      bins: [
        { from: 0, to: 0, count: 24 },
        { from: 1, to: 1, count: 39 },
        { from: 2, to: 3, count: 0 },
      ],
      empty: 'No records.',
    });
    const bins = attributes(svg, /<g class="bin"[^>]*>/g);
    assert.deepEqual(bins.map((bin) => [bin['data-from'], bin['data-to'], bin['data-count']]), [
      ['0', '0', '24'],
      ['1', '1', '39'],
      ['2', '3', '0'],
    ]);
    const heights = attributes(svg, /<rect class="bar"[^>]*>/g).map((bar) => Number(bar.height));
    assert.ok(Math.abs(heights[0]! / heights[1]! - 24 / 39) < 0.01);
    assert.equal(heights[2], 0);
    assert.ok(svg.includes('>2–3</text>'), 'a wider bin is labelled with its range');
    assert.ok(svg.includes('error turns per episode (count)</text>'));
    assert.ok(svg.includes('>episodes</text>'));
    assert.ok(svg.includes('>40</text>'), 'the count axis tops at a round 40');
  });
});
