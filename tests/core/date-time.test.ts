import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isoTimestamp, parseDateTime } from '../../src/core/date-time.js';
import { substream } from '../../src/core/random.js';

const millis = (text: string) => {
  const parsed = parseDateTime(text);
  assert.ok(!('problem' in parsed), `${text}: ${'problem' in parsed ? parsed.problem : ''}`);
  return parsed.millis;
};

describe('RFC 3339 date-times', () => {
  it('reads every offset form to the same instant', () => {
    const utc = Date.UTC(2026, 3, 14, 9, 30);
    for (const text of ['2026-04-14T09:30:00Z', '2026-04-14t09:30:00z', '2026-04-14 09:30:00Z', '2026-04-14T11:30:00+02:00', '2026-04-14T11:30:00+0200', '2026-04-14T11:30:00+02', '2026-04-14T04:00:00-05:30']) {
      assert.equal(millis(text), utc, text);
    }
  });

  it('keeps fractions, says whether the time is a whole minute, and counts a leap second as the next minute', () => {
    assert.equal(millis('2026-04-14T09:30:00.250Z'), Date.UTC(2026, 3, 14, 9, 30, 0, 250));
    assert.equal((parseDateTime('2026-04-14T09:30:00.000Z') as { wholeMinute: boolean }).wholeMinute, true);
    assert.equal((parseDateTime('2026-04-14T09:30:05Z') as { wholeMinute: boolean }).wholeMinute, false);
    assert.equal(millis('2026-06-30T23:59:60Z'), Date.UTC(2026, 6, 1, 0, 0, 0));
  });

  it('refuses text without an offset, or that is not a date-time, naming an example', () => {
    for (const text of ['2026-04-14T09:30:00', '2026-04-14', 'next tuesday', '2026-04-14T09:30Z']) {
      const parsed = parseDateTime(text);
      assert.ok('problem' in parsed, text);
      assert.match(parsed.problem, /is not an RFC 3339 date-time with an offset, e\.g\. 2026-04-14T09:30:00Z/);
    }
  });
});

describe('isoTimestamp', () => {
  const reference = (millis: number): string => new Date(millis).toISOString().replace('.000Z', 'Z');
  const outcome = (run: () => string): string => {
    try {
      return run();
    } catch (error) {
      return `${(error as Error).name}: ${(error as Error).message}`;
    }
  };

  it('prints every instant as toISOString does, without .000 on a whole second', () => {
    const epoch = Date.UTC(2026, 0, 5);
    const minute = 60_000;
    const day = 86_400_000;
    const max = 8.64e15;
    const values = [
      0, -0, 1, -1, 999, 1000, 30_000, minute, -minute, minute + 1, minute / 2, 1.5, Number.NaN, Infinity, -Infinity,
      epoch, epoch + 59 * minute, epoch + 60 * minute, epoch + 23 * 60 * minute + 59 * minute, epoch + day, epoch - minute, epoch + 0.5 * minute,
      Date.UTC(2024, 1, 29, 23, 59), Date.UTC(2024, 2, 1), Date.UTC(1969, 11, 31, 23, 59), Date.UTC(1900, 0, 1), Date.UTC(9999, 11, 31, 23, 59),
      Date.UTC(10000, 0, 1), Date.UTC(-1, 0, 1), Date.UTC(0, 0, 1, 0, 1), -62198755200000,
      max, -max, max - minute, -max + minute, max - day, -max + day, max - 2 * day, -max + 2 * day, max + minute, -max - minute, max - 2 * day - minute,
    ];
    const random = substream(3, 'iso-timestamp-test');
    for (let index = 0; index < 5000; index++) {
      values.push(epoch + random.int(-2_000_000, 2_000_000) * minute);
      values.push(random.int(-1e9, 1e9) * 8.64e6 + random.int(0, 1) * random.int(0, 59_999));
    }
    for (const value of values) assert.equal(outcome(() => isoTimestamp(value)), outcome(() => reference(value)), String(value));
  });
});
