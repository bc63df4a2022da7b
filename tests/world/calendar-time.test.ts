import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseDateTime } from '../../src/core/date-time.js';
import { substream } from '../../src/core/random.js';
import { busyEvents, findSlots, isWorking, findPerson, SLOT_STEP_MINUTES, type SlotSearch } from '../../src/world/calendar/calendar-schedule.js';
import type { CalendarState } from '../../src/world/calendar/calendar-state.js';
import { generateCalendarState } from '../../src/world/calendar/calendar-state.js';
import { clockMinutes, instant, parseInstant } from '../../src/world/calendar/calendar-time.js';

describe('calendar time, read once and remembered', () => {
  // What parseInstant and clockMinutes computed before they remembered anything.
  const referenceInstant = (text: string): number | { problem: string } => {
    const parsed = parseDateTime(text);
    if ('problem' in parsed) return parsed;
    if (!parsed.wholeMinute) return { problem: `"${text}" has seconds; calendar times fall on whole minutes (seconds :00)` };
    return parsed.millis / 60_000;
  };
  const referenceClock = (clock: string): number => {
    const [hours, minutes] = clock.split(':').map(Number);
    return hours! * 60 + minutes!;
  };

  it('gives the same instants, problems and clock minutes on every reading', () => {
    const texts = ['2026-04-14T09:30:00Z', '2026-04-14T11:30:00+02:00', '2026-04-14T09:30:30Z', '2026-04-14T09:30:00.000Z', '2026-04-14 09:30:00z',
      'not a time', '', '2026-13-01T00:00:00Z', '1969-12-31T23:59:00-00:30', '2026-04-14T09:30:00.5Z'];
    for (let round = 0; round < 3; round++) {
      for (const text of texts) {
        assert.deepEqual(parseInstant(text), referenceInstant(text), text);
        const expected = referenceInstant(text);
        if (typeof expected === 'number') assert.equal(instant(text), expected);
        else assert.throws(() => instant(text), { message: expected.problem });
      }
      for (const clock of ['09:00', '9:30', '17:45', '00:00', '24:00', '10', '', 'ab:cd', '10:5', '07:30:15']) assert.deepEqual(clockMinutes(clock), referenceClock(clock), clock);
    }
  });

  it('finds the same free slots as collecting every busy event would', () => {
    const reference = (state: CalendarState, search: SlotSearch): number[] => {
      const people = search.emails.map((email) => findPerson(state, email)!);
      const slots: number[] = [];
      const earliest = Math.max(search.from, search.notBefore);
      for (let start = Math.ceil(earliest / SLOT_STEP_MINUTES) * SLOT_STEP_MINUTES; start + search.duration <= search.to; start += SLOT_STEP_MINUTES) {
        const end = start + search.duration;
        if (people.every((person) => (!search.respectWorkingHours || isWorking(person, start, end)) && busyEvents(state, person.email, start, end).length === 0)) slots.push(start);
      }
      return slots;
    };
    let found = 0;
    for (let seed = 0; seed < 4; seed++) {
      const state = generateCalendarState(substream(seed, 'world'), {});
      const random = substream(seed, 'slots-test');
      const now = instant(state.now);
      for (let round = 0; round < 40; round++) {
        const emails = random.sample(state.people.map((person) => person.email), random.int(1, 3));
        const from = now + random.int(0, 20) * 24 * 60;
        const search: SlotSearch = { emails, duration: random.pick([30, 45, 60, 90]), from, to: from + random.int(1, 5) * 24 * 60, respectWorkingHours: random.chance(0.7), notBefore: now };
        const slots = findSlots(state, search);
        assert.deepEqual(slots, reference(state, search));
        found += slots.length;
      }
    }
    assert.ok(found > 100, `${found} slots`);
  });
});
