import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalJson } from '../../src/core/canonical-json.js';
import type { JsonObject } from '../../src/core/json-value.js';
import { substream } from '../../src/core/random.js';
import { compileValidator } from '../../src/core/schema-validator.js';
import { blocks, findPerson, isWorking } from '../../src/world/calendar/calendar-schedule.js';
import { caseStillHolds, type CalendarEvent, type CalendarState } from '../../src/world/calendar/calendar-state.js';
import { formatUtc, instant, localTime, offsetText, parseInstant } from '../../src/world/calendar/calendar-time.js';
import { ZONE_OFFSETS } from '../../src/world/calendar/calendar-vocabulary.js';
import { calendarWorld } from '../../src/world/calendar/calendar-world.js';
import { connectInProcess } from '../../src/world/in-process-connection.js';
import { createWorldServer } from '../../src/world/mcp-server-binding.js';

const fresh = (seed = 1): CalendarState => calendarWorld.init(substream(seed, 'world'), {});
const snapshotText = (state: CalendarState) => canonicalJson(calendarWorld.snapshot(state));
const spec = (name: string) => calendarWorld.tools.find((tool) => tool.name === name)!;

/** A successful call whose arguments pass the input schema and whose result passes the output schema. */
function ok(state: CalendarState, tool: string, args: JsonObject): any {
  assert.deepEqual(compileValidator(spec(tool).inputSchema)(args), [], `${tool} arguments ${JSON.stringify(args)}`);
  const outcome = calendarWorld.call(state, tool, args);
  assert.ok(outcome.ok, outcome.ok ? '' : outcome.message);
  assert.deepEqual(compileValidator(spec(tool).outputSchema!)(outcome.value), [], `${tool} result fits its output schema`);
  return outcome.value;
}

/** A refused call: its message names the problem, and the world is exactly as before. */
function refused(state: CalendarState, tool: string, args: JsonObject, message: RegExp): string {
  const before = snapshotText(state);
  const outcome = calendarWorld.call(state, tool, args);
  assert.equal(outcome.ok, false, `${tool} ${JSON.stringify(args)} should be refused`);
  const text = outcome.ok ? '' : outcome.message;
  assert.match(text, message);
  assert.equal(snapshotText(state), before, `${tool} refused but changed the world`);
  return text;
}

const events = (state: CalendarState) => [...state.events.values()];
const hostedWithGuests = (state: CalendarState) =>
  events(state).filter((event) => event.status === 'confirmed' && event.organizer === state.viewer && event.attendees.length >= 2);
const invitations = (state: CalendarState) =>
  events(state).filter(
    (event) => event.status === 'confirmed' && event.organizer !== state.viewer && event.attendees.some((attendee) => attendee.email === state.viewer),
  );
const stranger = (state: CalendarState, event: CalendarEvent) =>
  state.people.find((person) => !event.attendees.some((attendee) => attendee.email === person.email))!;

describe('calendar world state', () => {
  it('is the same for the same seed and different for another', () => {
    assert.equal(snapshotText(fresh(5)), snapshotText(fresh(5)));
    assert.notEqual(snapshotText(fresh(5)), snapshotText(fresh(6)));
  });

  it('holds people across time zones and a fortnight of meetings with unguessable ids and titles', () => {
    const state = fresh(3);
    assert.equal(state.people.length, 8);
    assert.ok(new Set(state.people.map((person) => person.time_zone)).size >= 2);
    for (const person of state.people) assert.match(person.email, new RegExp(`^[a-z]+\\.[a-z]+@${state.organisation}\\.example\\.com$`));
    assert.ok(state.events.size >= 20, `${state.events.size} events`);
    const titles = new Set<string>();
    for (const event of events(state)) {
      assert.match(event.id, /^ev-[0-9a-f]{6}$/);
      assert.match(event.title, /^[A-Z][A-Za-z :-]+ \([A-Z][a-z]+-[0-9a-f]{4}\)$/);
      titles.add(event.title);
      assert.equal(event.attendees[0]!.email, event.organizer);
      assert.equal(event.attendees[0]!.response, 'accepted');
      assert.ok(event.start > state.now && event.end > event.start);
    }
    assert.equal(titles.size, state.events.size, 'titles are unique');
    const other = fresh(4);
    const shared = [...state.events.keys()].filter((id) => other.events.has(id));
    assert.ok(shared.length <= 1, 'another seed draws other ids');
  });

  it('never double-books anyone in the seeded calendar, and never has the viewer decline', () => {
    for (let seed = 0; seed < 12; seed++) {
      const state = fresh(seed);
      for (const person of state.people) {
        const mine = events(state)
          .filter((event) => event.attendees.some((attendee) => attendee.email === person.email))
          .sort((left, right) => (left.start < right.start ? -1 : 1));
        for (let index = 1; index < mine.length; index++) assert.ok(mine[index]!.start >= mine[index - 1]!.end, `seed ${seed}: ${person.email} double-booked`);
      }
      for (const event of events(state)) {
        const seat = event.attendees.find((attendee) => attendee.email === state.viewer);
        assert.notEqual(seat?.response, 'declined');
      }
    }
  });

  it('always has what the lane draws from: meetings to cancel, invitations to decline, and scheduling cases that still hold', () => {
    for (let seed = 0; seed < 40; seed++) {
      const state = fresh(seed);
      assert.ok(hostedWithGuests(state).length >= 2, `seed ${seed}: meetings the viewer organizes`);
      assert.ok(invitations(state).length >= 2, `seed ${seed}: invitations from others`);
      assert.ok(events(state).some((event) => event.status === 'cancelled'), `seed ${seed}: a cancelled distractor`);
      const viewer = findPerson(state, state.viewer)!;
      for (const person of state.people.filter((candidate) => candidate.time_zone !== viewer.time_zone)) {
        assert.ok(events(state).some((event) => event.status === 'confirmed' && event.attendees.some((attendee) => attendee.email === person.email)));
      }
      for (const kind of ['slots', 'local', 'events'] as const) {
        assert.ok(state.cases[kind].length >= 1, `seed ${seed}: no ${kind} case`);
        state.cases[kind].forEach((_, index) => assert.ok(caseStillHolds(state, kind, index), `seed ${seed}: ${kind}[${index}]`));
      }
      for (const item of state.cases.local) assert.notEqual(findPerson(state, item.person_email)!.time_zone, viewer.time_zone);
    }
  });

  it('takes its knobs from a config the lane can validate', () => {
    const validate = compileValidator(calendarWorld.configSchema);
    assert.deepEqual(validate({ extra_meetings: 14 }), []);
    assert.notDeepEqual(validate({ extra_meetings: 99 }), []);
    assert.notDeepEqual(validate({ meetings: 3 }), []);
    const sparse = calendarWorld.init(substream(3, 'world'), { extra_meetings: 0 });
    const busy = calendarWorld.init(substream(3, 'world'), { extra_meetings: 30 });
    assert.ok(sparse.events.size < busy.events.size, `${sparse.events.size} < ${busy.events.size}`);
  });

  it('takes snapshots that are deep copies and do not change when the state does', () => {
    const state = fresh(2);
    const before = calendarWorld.snapshot(state);
    const text = canonicalJson(before);
    const target = hostedWithGuests(state)[0]!;
    ok(state, 'cancel_event', { event_id: target.id });
    assert.equal(canonicalJson(before), text);
    assert.notEqual(snapshotText(state), text);
    const snapshot = calendarWorld.snapshot(state) as any;
    snapshot.events[target.id].title = 'changed';
    snapshot.people[0].name = 'changed';
    assert.notEqual(state.events.get(target.id)!.title, 'changed');
    assert.notEqual(state.people[0]!.name, 'changed');
  });

  it('shows in the snapshot the derived fields lanes draw on, consistent with the stored event', () => {
    const state = fresh(6);
    const snapshot = calendarWorld.snapshot(state) as any;
    assert.deepEqual(Object.keys(snapshot.events), [...state.events.keys()].sort());
    for (const event of events(state)) {
      const seen = snapshot.events[event.id];
      assert.deepEqual(seen.attendee_emails, event.attendees.map((attendee) => attendee.email).sort());
      assert.equal(seen.attendee_count, event.attendees.length);
      assert.equal(seen.response_counts.needs_action, event.attendees.filter((attendee) => attendee.response === 'needs_action').length);
      for (const attendee of seen.attendees) {
        const offset = ZONE_OFFSETS[findPerson(state, attendee.email)!.time_zone];
        assert.equal(attendee.local_start_time, localTime(instant(event.start), offset).time);
      }
    }
    assert.equal(snapshot.people.filter((person: any) => person.is_viewer).length, 1);
  });
});

describe('calendar time', () => {
  it('parses every RFC 3339 offset form to the same instant and writes UTC back', () => {
    const utc = instant('2026-04-14T03:30:00Z');
    for (const text of ['2026-04-14T09:00:00+05:30', '2026-04-14t09:00:00+0530', '2026-04-14 03:30:00z', '2026-04-13T20:30:00-07:00', '2026-04-14T03:30:00.000Z']) {
      assert.equal(parseInstant(text), utc, text);
    }
    assert.equal(formatUtc(utc), '2026-04-14T03:30:00Z');
    assert.match((parseInstant('2026-04-14T03:30:15Z') as { problem: string }).problem, /whole minutes/);
  });

  it('uses a fixed offset table for the seeded period, not the host clock', () => {
    assert.equal(offsetText(ZONE_OFFSETS['Europe/Berlin']), '+02:00');
    assert.equal(offsetText(ZONE_OFFSETS['America/New_York']), '-04:00');
    assert.equal(offsetText(ZONE_OFFSETS['Asia/Kolkata']), '+05:30');
    assert.equal(offsetText(ZONE_OFFSETS['Australia/Sydney']), '+10:00');
    assert.deepEqual(localTime(instant('2026-04-14T03:30:00Z'), ZONE_OFFSETS['America/Los_Angeles']), { date: '2026-04-13', time: '20:30', weekday: 'Monday' });
    assert.deepEqual(localTime(instant('2026-04-14T23:30:00Z'), ZONE_OFFSETS['Asia/Tokyo']), { date: '2026-04-15', time: '08:30', weekday: 'Wednesday' });
  });
});

describe('calendar world tools', () => {
  it('answers every read tool with a result that fits its output schema', () => {
    const state = fresh(7);
    const me = ok(state, 'get_person', {}).person;
    assert.equal(me.email, state.viewer);
    assert.equal(me.is_you, true);
    const other = state.people.find((person) => person.email !== state.viewer)!;
    const them = ok(state, 'get_person', { email: other.email.toUpperCase() }).person;
    assert.equal(them.utc_offset, offsetText(ZONE_OFFSETS[other.time_zone]));
    assert.equal(them.is_you, false);

    const listed = ok(state, 'list_events', { email: state.viewer, time_min: '2026-04-13T00:00:00Z', time_max: '2026-04-25T00:00:00Z' });
    const expected = events(state)
      .filter((event) => event.status === 'confirmed' && event.attendees.some((attendee) => attendee.email === state.viewer))
      .map((event) => event.id);
    assert.deepEqual(listed.events.map((event: any) => event.id).sort(), expected.sort());
    assert.equal(listed.total, expected.length);
    assert.ok(listed.events.every((event: any, index: number) => index === 0 || listed.events[index - 1].start <= event.start));

    const target = invitations(state)[0]!;
    const found = ok(state, 'get_event', { event_id: target.id, time_zone: 'Asia/Tokyo' });
    assert.equal(found.event.title, target.title);
    assert.equal(found.local.start_time, localTime(instant(target.start), 540).time);
    assert.equal(found.local.utc_offset, '+09:00');
    assert.equal('local' in ok(state, 'get_event', { event_id: target.id }), false);

    const query = target.title.split('(')[1]!.slice(0, -1);
    const byTitle = ok(state, 'list_events', { email: state.viewer, time_min: '2026-04-13T00:00:00Z', time_max: '2026-04-25T00:00:00Z', query });
    assert.deepEqual(byTitle.events.map((event: any) => event.id), [target.id]);

    const guests = ok(state, 'list_attendees', { event_id: target.id });
    assert.equal(guests.total, target.attendees.length);
    const pending = ok(state, 'list_attendees', { event_id: target.id, response_status: 'needs_action' });
    assert.ok(pending.attendees.every((attendee: any) => attendee.response === 'needs_action'));

    const cancelled = events(state).find((event) => event.status === 'cancelled')!;
    const attendee = cancelled.attendees[1] ?? cancelled.attendees[0]!;
    const window = { email: attendee.email, time_min: cancelled.start, time_max: cancelled.end };
    assert.ok(!ok(state, 'list_events', window).events.some((event: any) => event.id === cancelled.id));
    assert.ok(ok(state, 'list_events', { ...window, include_cancelled: true }).events.some((event: any) => event.id === cancelled.id));
  });

  it('finds only slots where everyone is free and inside their own working hours, earliest first', () => {
    for (const seed of [1, 2, 3]) {
      const state = fresh(seed);
      const item = state.cases.slots[0]!;
      const args = { attendees: item.emails, duration_minutes: item.duration_minutes, time_min: item.range_start, time_max: item.range_end, max_results: 20 };
      const result = ok(state, 'find_free_slots', args);
      assert.equal(result.slots[0].start, item.first_start);
      assert.equal(result.slots[0].end, item.first_end);
      for (const slot of result.slots) {
        const [from, to] = [instant(slot.start), instant(slot.end)];
        assert.equal(to - from, item.duration_minutes);
        for (const email of item.emails) {
          assert.ok(isWorking(findPerson(state, email)!, from, to), `${slot.start} is outside ${email}'s working hours`);
          assert.ok(!events(state).some((event) => blocks(event, email) && instant(event.start) < to && instant(event.end) > from));
        }
      }
      const anyHour = ok(state, 'find_free_slots', { ...args, respect_working_hours: false });
      assert.ok(anyHour.total > result.total);
      assert.notEqual(anyHour.slots[0].start, item.first_start);
      const alone = ok(state, 'find_free_slots', { ...args, attendees: item.others });
      assert.notEqual(alone.slots[0].start, item.first_start, 'leaving the organizer out finds another slot');
      assert.equal(ok(state, 'find_free_slots', { ...args, max_results: 1 }).slots.length, 1);
    }
  });

  it('never offers a slot before now', () => {
    const state = fresh(1);
    const result = ok(state, 'find_free_slots', {
      attendees: [state.viewer],
      duration_minutes: 30,
      time_min: '2026-04-12T00:00:00Z',
      time_max: '2026-04-13T00:00:00Z',
      respect_working_hours: false,
    });
    assert.ok(result.slots.every((slot: any) => slot.start >= state.now));
    assert.equal(result.slots[0].start, state.now);
  });

  it('books a time given in another zone at the right UTC instant, with the organizer attending', () => {
    const state = fresh(8);
    const item = state.cases.local[0]!;
    const offset = offsetText(ZONE_OFFSETS[item.time_zone]);
    const made = ok(state, 'create_event', {
      title: 'Intro call',
      attendees: [item.person_email],
      start: `${item.date}T${item.local_time}:00${offset}`,
      duration_minutes: 30,
    });
    assert.equal(made.event.start, item.start_utc);
    assert.equal(made.event.end, item.end_utc);
    assert.equal(made.event.organizer, state.viewer);
    assert.deepEqual(made.event.attendees, [
      { email: state.viewer, response: 'accepted' },
      { email: item.person_email, response: 'needs_action' },
    ]);
    assert.deepEqual(made.outside_working_hours.includes(item.person_email), false);
    assert.match(made.event.id, /^ev-[0-9a-f]{6}$/);
    assert.ok(!fresh(8).events.has(made.event.id));
  });

  it('gives created events the same id for the same seed and history', () => {
    const [a, b] = [fresh(9), fresh(9)];
    const item = a.cases.local[0]!;
    const args = { title: 'Same', attendees: [item.person_email], start: item.start_utc, end: item.end_utc };
    assert.deepEqual(ok(a, 'create_event', args), ok(b, 'create_event', args));
  });

  it('refuses a double booking unless allow_conflict is set, naming the conflicting event', () => {
    const state = fresh(10);
    const busy = invitations(state)[0]!;
    const guest = busy.attendees.find((attendee) => attendee.response !== 'declined' && attendee.email !== state.viewer)!;
    const args = { title: 'Overlap', attendees: [guest.email], start: busy.start, end: busy.end };
    const message = refused(state, 'create_event', args, /^Conflict: /);
    assert.ok(message.includes(busy.id) && message.includes(busy.title), message);
    assert.match(message, /allow_conflict/);
    const forced = ok(state, 'create_event', { ...args, allow_conflict: true });
    assert.equal(forced.event.start, busy.start);
  });

  it('treats a declined or cancelled event as free time', () => {
    const state = fresh(11);
    const freeAt = (email: string, event: CalendarEvent) =>
      ok(state, 'find_free_slots', {
        attendees: [email],
        duration_minutes: instant(event.end) - instant(event.start),
        time_min: event.start,
        time_max: event.end,
        respect_working_hours: false,
      }).slots.map((slot: any) => slot.start);
    const cancelled = events(state).find((event) => event.status === 'cancelled')!;
    assert.deepEqual(freeAt(cancelled.organizer, cancelled), [cancelled.start]);
    const invite = invitations(state)[0]!;
    assert.deepEqual(freeAt(state.viewer, invite), []);
    ok(state, 'respond_to_event', { event_id: invite.id, response: 'declined' });
    assert.deepEqual(freeAt(state.viewer, invite), [invite.start]);
  });

  it('enforces the rules of times: whole minutes, inside the covered period, not in the past, a sane length', () => {
    const state = fresh(12);
    const other = state.people.find((person) => person.email !== state.viewer)!.email;
    const base = { title: 'Timing', attendees: [other] };
    refused(state, 'create_event', { ...base, start: '2026-04-20T10:00:30Z', duration_minutes: 30 }, /whole minutes/);
    refused(state, 'create_event', { ...base, start: '2026-12-01T10:00:00Z', duration_minutes: 30 }, /outside the period this calendar covers/);
    refused(state, 'create_event', { ...base, start: '2026-04-10T10:00:00Z', duration_minutes: 30 }, /in the past; it is now 2026-04-12T18:00:00Z/);
    refused(state, 'create_event', { ...base, start: '2026-05-04T10:00:00Z', end: '2026-05-04T09:00:00Z' }, /must be after start/);
    refused(state, 'create_event', { ...base, start: '2026-05-04T08:00:00Z', end: '2026-05-04T17:00:00Z' }, /at most 480 minutes/);
    refused(state, 'create_event', { ...base, start: '2026-05-04T08:00:00Z', end: '2026-05-04T09:00:00Z', duration_minutes: 60 }, /either end or duration_minutes, not both/);
    refused(state, 'create_event', { ...base, start: '2026-05-04T08:00:00Z' }, /Give either end or duration_minutes/);
    const window = { email: other, time_min: '2026-04-20T00:00:00Z' };
    refused(state, 'list_events', { ...window, time_max: '2026-04-19T00:00:00Z' }, /time_max .* must be after time_min/);
    refused(state, 'list_events', { ...window, time_max: '2026-06-20T00:00:00Z' }, /more than 31 days/);
    const slots = { attendees: [other], duration_minutes: 60, time_min: '2026-04-20T00:00:00Z' };
    refused(state, 'find_free_slots', { ...slots, time_max: '2026-05-20T00:00:00Z' }, /more than 14 days/);
    refused(state, 'find_free_slots', { ...slots, time_max: '2026-04-20T00:30:00Z' }, /shorter than duration_minutes/);
  });

  it('refuses people and events that do not exist, saying how to find real ones', () => {
    const state = fresh(13);
    refused(state, 'get_person', { email: 'nobody@nowhere.example.com' }, new RegExp(`No person with email "nobody@nowhere.example.com".*@${state.organisation}\\.example\\.com`));
    refused(state, 'list_events', { email: 'nobody@nowhere.example.com', time_min: '2026-04-13T00:00:00Z', time_max: '2026-04-14T00:00:00Z' }, /No person/);
    refused(state, 'find_free_slots', { attendees: [state.viewer, 'ghost@x.example.com'], duration_minutes: 30, time_min: '2026-04-13T00:00:00Z', time_max: '2026-04-14T00:00:00Z' }, /"ghost@x.example.com"/);
    refused(state, 'create_event', { title: 'Ghost', attendees: ['ghost@x.example.com'], start: '2026-05-04T08:00:00Z', duration_minutes: 30 }, /No person/);
    for (const tool of ['get_event', 'list_attendees', 'cancel_event']) refused(state, tool, { event_id: 'ev-000000' }, /Event ev-000000 not found; list_events/);
    refused(state, 'respond_to_event', { event_id: 'ev-000000', response: 'accepted' }, /not found/);
  });

  it('lets only the organizer cancel, reschedule or update; an attendee is pointed to declining', () => {
    const state = fresh(14);
    const invite = invitations(state)[0]!;
    refused(state, 'cancel_event', { event_id: invite.id }, /Only the organizer \(.+\) can cancel .* use respond_to_event to decline it/);
    refused(state, 'reschedule_event', { event_id: invite.id, start: '2026-05-04T08:00:00Z' }, /Only the organizer .* can reschedule/);
    refused(state, 'update_event', { event_id: invite.id, fields: { title: 'Mine now' } }, /Only the organizer .* can update/);
    const foreign = events(state).find((event) => !event.attendees.some((attendee) => attendee.email === state.viewer))!;
    refused(state, 'cancel_event', { event_id: foreign.id }, /You are not invited to it/);
    refused(state, 'respond_to_event', { event_id: foreign.id, response: 'accepted' }, /are not invited/);
    const own = hostedWithGuests(state)[0]!;
    refused(state, 'respond_to_event', { event_id: own.id, response: 'declined' }, /You organize .* cancel_event/);
  });

  it('declines an invitation and cancels an own event once', () => {
    const state = fresh(15);
    const invite = invitations(state)[0]!;
    const answered = ok(state, 'respond_to_event', { event_id: invite.id, response: 'declined', comment: 'Travelling' });
    assert.equal(answered.your_response, 'declined');
    assert.equal(answered.event.status, 'confirmed');
    assert.deepEqual(ok(state, 'respond_to_event', { event_id: invite.id, response: 'declined' }).your_response, 'declined');
    const own = hostedWithGuests(state)[0]!;
    const cancelled = ok(state, 'cancel_event', { event_id: own.id, note: 'No longer needed' });
    assert.equal(cancelled.event.status, 'cancelled');
    assert.equal(cancelled.event.cancellation_note, 'No longer needed');
    refused(state, 'cancel_event', { event_id: own.id }, /already cancelled/);
    refused(state, 'reschedule_event', { event_id: own.id, start: '2026-05-04T08:00:00Z' }, /is cancelled; create a new event/);
    refused(state, 'update_event', { event_id: own.id, fields: { title: 'Again' } }, /is cancelled/);
    const guestOwn = events(state).find((event) => event.status === 'cancelled' && event.organizer !== state.viewer && event.attendees.some((a) => a.email === state.viewer));
    if (guestOwn) refused(state, 'respond_to_event', { event_id: guestOwn.id, response: 'accepted' }, /is cancelled/);
  });

  it('reschedules without conflicts, keeping the length and asking attendees again', () => {
    const state = fresh(16);
    const item = state.cases.events[0]!;
    const event = state.events.get(item.event_id)!;
    refused(state, 'reschedule_event', { event_id: event.id, start: event.start }, /nothing to change/);
    const clash = events(state).find(
      (other) => other.id !== event.id && event.attendees.some((attendee) => blocks(other, attendee.email)) && other.start > state.now,
    )!;
    refused(state, 'reschedule_event', { event_id: event.id, start: clash.start }, /^Conflict: /);
    const sequence = event.sequence;
    const moved = ok(state, 'reschedule_event', { event_id: event.id, start: item.first_start });
    assert.equal(moved.event.start, item.first_start);
    assert.equal(moved.event.end, item.first_end);
    assert.equal(moved.event.sequence, sequence + 1);
    assert.ok(moved.event.attendees.every((attendee: any) => attendee.email === state.viewer ? attendee.response === 'accepted' : attendee.response === 'needs_action'));
    assert.deepEqual(moved.outside_working_hours, []);
    const longer = ok(state, 'reschedule_event', { event_id: event.id, start: item.first_start, duration_minutes: item.duration_minutes + 15 });
    assert.equal(longer.event.duration_minutes, item.duration_minutes + 15);
  });

  it('updates an own event: invites and removes people under the same rules', () => {
    const state = fresh(17);
    const event = hostedWithGuests(state)[0]!;
    const guest = event.attendees[1]!.email;
    const outsider = stranger(state, event);
    refused(state, 'update_event', { event_id: event.id, fields: { add_attendees: [guest] } }, /Already invited/);
    refused(state, 'update_event', { event_id: event.id, fields: { remove_attendees: [outsider.email] } }, /Not invited .* cannot be removed/);
    refused(state, 'update_event', { event_id: event.id, fields: { remove_attendees: [state.viewer] } }, /organizer .* cannot be removed; cancel/);
    refused(state, 'update_event', { event_id: event.id, fields: { add_attendees: [outsider.email], remove_attendees: [outsider.email] } }, /both added and removed/);
    const updated = ok(state, 'update_event', { event_id: event.id, fields: { title: 'Renamed sync', remove_attendees: [guest] }, allow_conflict: true });
    assert.equal(updated.event.title, 'Renamed sync');
    assert.ok(!updated.event.attendees.some((attendee: any) => attendee.email === guest));
    const busyGuest = state.people.find(
      (person) => !updated.event.attendees.some((attendee: any) => attendee.email === person.email) &&
        events(state).some((other) => blocks(other, person.email) && other.start < event.end && other.end > event.start),
    );
    if (busyGuest) refused(state, 'update_event', { event_id: event.id, fields: { add_attendees: [busyGuest.email] } }, /^Conflict: /);
  });

  it('claims: a write sentence needs its own tool, and refusing sentences claim nothing', () => {
    const claims = (tool: string) => spec(tool).claims!.map((source) => new RegExp(source, 'i'));
    const claimed = (tool: string, sentence: string) => claims(tool).some((pattern) => pattern.test(sentence));
    assert.ok(claimed('create_event', 'Booked "Planning 1a2b3c" from 09:00 to 09:30.'));
    assert.ok(claimed('cancel_event', "I've cancelled the meeting."));
    assert.ok(claimed('respond_to_event', 'I declined it for you instead.'));
    assert.ok(claimed('reschedule_event', 'Moved "Budget sync" to 10:00.'));
    assert.ok(!claimed('cancel_event', "I can't cancel \"Budget sync\": someone else organizes it."));
    assert.ok(!claimed('create_event', 'I have not booked it: they already have a meeting then.'));
    assert.ok(!claimed('create_event', 'Rescheduled it to Friday.'));
  });
});

describe('calendar world served over MCP (real SDK client and server)', () => {
  it('lists its tools and answers calls with structured content', async () => {
    const state = fresh(20);
    const { client, close } = await connectInProcess(createWorldServer({ world: calendarWorld, state }));
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((tool) => tool.name), calendarWorld.tools.map((tool) => tool.name));
      assert.ok(tools.length >= 5 && tools.length <= 12);
      for (const tool of tools) {
        assert.equal(tool.inputSchema.type, 'object');
        assert.ok(tool.outputSchema);
        assert.equal(typeof tool.annotations?.readOnlyHint, 'boolean');
      }
      const me = await client.callTool({ name: 'get_person', arguments: {} });
      assert.equal((me.structuredContent as any).person.email, state.viewer);
      const item = state.cases.slots[0]!;
      const free = await client.callTool({
        name: 'find_free_slots',
        arguments: { attendees: item.emails, duration_minutes: item.duration_minutes, time_min: item.range_start, time_max: item.range_end },
      });
      assert.equal(free.isError, undefined);
      assert.equal((free.structuredContent as any).slots[0].start, item.first_start);
      assert.deepEqual(JSON.parse((free.content as any)[0].text), free.structuredContent);
    } finally {
      await close();
    }
  });

  it('answers bad arguments and broken rules with isError results, and changes nothing', async () => {
    const state = fresh(21);
    const before = snapshotText(state);
    const { client, close } = await connectInProcess(createWorldServer({ world: calendarWorld, state }));
    try {
      const bad = await client.callTool({ name: 'create_event', arguments: { title: 'X', attendees: 'a@b.example.com', start: 'tomorrow', duration_minutes: 'thirty' } });
      assert.equal(bad.isError, true);
      const text = (bad.content as any)[0].text as string;
      for (const part of ['title: must be at least 3 characters', 'attendees: expected array, got string', 'start: must be a valid date-time', 'duration_minutes: expected integer, got string']) {
        assert.ok(text.includes(part), `${text} names ${part}`);
      }
      const invite = invitations(state)[0]!;
      const cancel = await client.callTool({ name: 'cancel_event', arguments: { event_id: invite.id } });
      assert.equal(cancel.isError, true);
      assert.match((cancel.content as any)[0].text, /Only the organizer/);
    } finally {
      await close();
    }
    assert.equal(snapshotText(state), before);
  });
});
