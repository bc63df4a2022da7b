import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseDateTime } from '../../src/core/date-time.js';

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
