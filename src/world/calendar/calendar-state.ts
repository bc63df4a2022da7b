// Owns the state of the calendar world and its seeded generation: a team of
// people spread over time zones, a fortnight of meetings whose ids, titles,
// times and responses cannot be guessed without reading them through the
// tools, and hidden scheduling cases (with their answers, computed by the
// world's own slot finder) that lanes draw tasks from.

import type { Random } from '../../core/random.js';
import { capitalise } from '../../core/letter-case.js';
import type { Attendee, CalendarCases, CalendarConfig, CalendarEvent, CalendarState, EventCase, Person, SlotCase } from './calendar-model.js';
import { conflictsFor, findPerson, firstSlot, isWorking } from './calendar-schedule.js';
import { clockMinutes, clockText, formatUtc, instant, MINUTES_PER_DAY, offsetOf, startOfUtcDate } from './calendar-time.js';
import {
  AGENDA_LINES,
  CODENAMES,
  LOCAL_MEETING_TIMES,
  MEETING_TOPICS,
  NOW,
  SEEDED_DATES,
  WORKDAY_MINUTES,
  WORKDAY_STARTS,
  ZONE_NAMES,
  type ZoneName,
} from './calendar-vocabulary.js';
import { FIRST_NAMES, LAST_NAMES, ORGANISATIONS } from '../people-vocabulary.js';

export type { EventStatus, Person, Attendee, CalendarEvent, SlotCase, LocalCase, EventCase, CalendarCases, CalendarState, CalendarConfig } from './calendar-model.js';

const CASES_PER_KIND = 2;

export function generateCalendarState(random: Random, config: CalendarConfig): CalendarState {
  const organisation = random.pick(ORGANISATIONS);
  const people = generatePeople(random, organisation);
  const viewer = people[0]!;
  const state: CalendarState = {
    organisation,
    viewer: viewer.email,
    now: NOW,
    people: [...people].sort((left, right) => (left.email < right.email ? -1 : left.email > right.email ? 1 : 0)),
    events: new Map(),
    cases: { slots: [], local: [], events: [] },
    id_salt: random.hex(8),
    next_serial: random.int(1000, 9000),
  };
  const meetings = new MeetingMaker(state, random);
  const others = people.slice(1);

  // Enough of each kind of record that every task has a target and a distractor:
  // meetings the viewer organizes, invitations the viewer received from others,
  // and meetings the viewer is not part of.
  const hosted = () => [...state.events.values()].filter((event) => event.organizer === viewer.email && event.attendees.length >= 2).length;
  for (let attempt = 0; attempt < 20 && (attempt < 3 || hosted() < 3); attempt++) {
    meetings.place(viewer, random.sample(others, random.int(1, 3)), { forcePending: true });
  }
  others.forEach((organizer, index) => {
    const pool = others.filter((person) => person !== organizer);
    const guests = random.sample(pool, random.int(1, 3));
    if (index >= 2 && random.chance(0.5)) guests.push(viewer);
    // Everyone has at least one meeting, if only a focus block of their own.
    meetings.place(organizer, guests) ?? meetings.place(organizer, [], { title: 'Focus time' });
  });
  const invitations = () =>
    [...state.events.values()].filter((event) => event.organizer !== viewer.email && event.attendees.some((attendee) => attendee.email === viewer.email)).length;
  for (let attempt = 0; attempt < 20 && (attempt < 2 || invitations() < 3); attempt++) {
    const organizer = random.pick(others);
    const guests = [viewer, ...random.sample(others.filter((person) => person !== organizer), random.int(0, 2))];
    meetings.place(organizer, guests);
  }
  const extra = config.extra_meetings ?? 14;
  const extras: CalendarEvent[] = [];
  for (let index = 0; index < extra; index++) {
    const organizer = random.pick(people);
    const pool = people.filter((person) => person !== organizer);
    const placed = meetings.place(organizer, random.sample(pool, random.int(1, 4)));
    if (placed) extras.push(placed);
  }
  // A couple of cancelled meetings: they show up when asked for, but block nobody.
  for (const event of random.sample(extras, Math.min(2, extras.length))) {
    event.status = 'cancelled';
    event.sequence += 1;
    event.cancellation_note = 'Cancelled by the organizer.';
  }

  const dates = random.shuffle(SEEDED_DATES);
  buildEventCases(state, random, meetings, dates);
  buildSlotCases(state, random, meetings, dates);
  buildLocalCases(state, random);
  // Each case was checked when it was made; a later one's blocking meeting
  // must not have moved an earlier one's answer.
  for (const kind of ['slots', 'local', 'events'] as const) {
    const list = state.cases[kind] as unknown[];
    const holding = list.filter((_, index) => caseStillHolds(state, kind, index));
    list.splice(0, list.length, ...holding);
  }
  return state;
}

function generatePeople(random: Random, organisation: string): Person[] {
  const firsts = random.sample(FIRST_NAMES, 8);
  const lasts = random.sample(LAST_NAMES, 8);
  const viewerZone = random.pick(ZONE_NAMES);
  const viewerOffset = offsetOf(viewerZone);
  // Zones near the viewer's (a few hours apart) give everyone shared working
  // hours; the first two colleagues are always in another zone, so "their
  // local time" never equals the viewer's.
  const near = ZONE_NAMES.filter((zone) => Math.abs(offsetOf(zone) - viewerOffset) <= 5 * 60);
  const nearOther = near.filter((zone) => zone !== viewerZone);
  const zones: ZoneName[] = [viewerZone];
  for (let index = 1; index < 8; index++) {
    if (index <= 2) zones.push(random.pick(nearOther));
    else zones.push(random.chance(0.75) ? random.pick(near) : random.pick(ZONE_NAMES));
  }
  return firsts.map((first, index) => {
    const last = lasts[index]!;
    const start = random.pick(WORKDAY_STARTS);
    return {
      email: `${first}.${last}@${organisation}.example.com`,
      name: `${capitalise(first)} ${capitalise(last)}`,
      time_zone: zones[index]!,
      working_hours: { start, end: clockText(clockMinutes(start) + WORKDAY_MINUTES) },
    };
  });
}

interface PlaceOptions {
  /** At least one guest has not answered yet. */
  forcePending?: boolean;
  /** A fixed title topic instead of a random one. */
  title?: string;
}

/** Places seeded meetings so that no one is ever double-booked, with unique ids and titles. */
class MeetingMaker {
  private readonly ids = new Set<string>();
  private readonly tokens = new Set<string>();

  constructor(
    private readonly state: CalendarState,
    private readonly random: Random,
  ) {}

  place(organizer: Person, guests: Person[], options: PlaceOptions = {}): CalendarEvent | undefined {
    let invited = guests.filter((guest) => guest !== organizer);
    for (let attempt = 0; attempt < 40; attempt++) {
      // Far-apart zones may share no working hours: drop a guest now and then.
      if (attempt > 0 && attempt % 10 === 0 && invited.length > 1) invited = invited.slice(0, -1);
      const span = this.randomSpan(organizer, invited);
      if (!span) continue;
      if ([organizer, ...invited].some((person) => this.taken(person.email, span.start, span.end))) continue;
      return this.add(organizer, invited, span, options);
    }
    return undefined;
  }

  /** Anything on their calendar at all (even declined or cancelled): seeded calendars never overlap. */
  private taken(email: string, from: number, to: number): boolean {
    return [...this.state.events.values()].some(
      (event) => event.attendees.some((attendee) => attendee.email === email) && instant(event.start) < to && instant(event.end) > from,
    );
  }

  private randomSpan(organizer: Person, invited: Person[]): { start: number; end: number } | undefined {
    const random = this.random;
    const duration = random.pick([30, 30, 45, 60, 60, 90]);
    const date = random.pick(SEEDED_DATES);
    const offset = offsetOf(organizer.time_zone);
    const dayStart = startOfUtcDate(date) - offset + clockMinutes(organizer.working_hours.start);
    const starts: number[] = [];
    for (let start = dayStart; start + duration <= dayStart + WORKDAY_MINUTES; start += 30) {
      if (start >= instant(this.state.now) && [organizer, ...invited].every((person) => isWorking(person, start, start + duration))) starts.push(start);
    }
    if (starts.length === 0) return undefined;
    const start = random.pick(starts);
    return { start, end: start + duration };
  }

  add(organizer: Person, invited: Person[], span: { start: number; end: number }, options: PlaceOptions): CalendarEvent {
    const random = this.random;
    const attendees: Attendee[] = [{ email: organizer.email, response: 'accepted' }];
    for (const guest of invited) {
      const response =
        guest.email === this.state.viewer
          ? random.weighted({ accepted: 5, tentative: 2, needs_action: 3 })
          : random.weighted({ accepted: 5, tentative: 2, declined: 2, needs_action: 3 });
      attendees.push({ email: guest.email, response });
    }
    if (options.forcePending && attendees.length > 1 && attendees.every((attendee) => attendee.response !== 'needs_action')) {
      attendees[1 + random.int(0, attendees.length - 2)]!.response = 'needs_action';
    }
    const event: CalendarEvent = {
      id: this.newId(),
      title: `${options.title ?? random.pick(MEETING_TOPICS)} (${this.newToken()})`,
      description: random.pick(AGENDA_LINES),
      organizer: organizer.email,
      attendees,
      start: formatUtc(span.start),
      end: formatUtc(span.end),
      status: 'confirmed',
      sequence: random.int(0, 2),
      cancellation_note: null,
    };
    this.state.events.set(event.id, event);
    return event;
  }

  private newId(): string {
    let id: string;
    do id = `ev-${this.random.hex(6)}`;
    while (this.ids.has(id));
    this.ids.add(id);
    return id;
  }

  private newToken(): string {
    let token: string;
    do token = `${this.random.pick(CODENAMES)}-${this.random.hex(4)}`;
    while (this.tokens.has(token));
    this.tokens.add(token);
    return token;
  }

  /**
   * Makes `person` busy for [start, start + 30): a meeting with someone free
   * then (not among `avoid`), or a focus block of their own.
   */
  block(person: Person, start: number, avoid: readonly string[]): CalendarEvent | undefined {
    const span = { start, end: start + 30 };
    if (this.taken(person.email, span.start, span.end)) return undefined;
    const partners = this.random.shuffle(this.state.people.filter((other) => other !== person && !avoid.includes(other.email)));
    const partner = partners.find((other) => !this.taken(other.email, span.start, span.end));
    return partner ? this.add(partner, [person], span, {}) : this.add(person, [], span, { title: 'Focus time' });
  }

  remove(event: CalendarEvent): void {
    this.state.events.delete(event.id);
  }
}

/** A date as the viewer lives it: 24 hours from their local midnight, in UTC minutes. */
function viewerDay(state: CalendarState, date: string): { from: number; to: number } {
  const from = startOfUtcDate(date) - offsetOf(findPerson(state, state.viewer)!.time_zone);
  return { from, to: from + MINUTES_PER_DAY };
}

function sortedEmails(emails: Iterable<string>): string[] {
  return [...new Set(emails)].sort();
}

interface CaseSearch {
  emails: string[];
  /** The tempting partial search (some of the calendars) whose first slot must differ. */
  partial: string[];
  /** Who gets a blocking meeting when the partial search would find the same slot. */
  blockable: Person;
  duration: number;
  range: { from: number; to: number };
}

/**
 * The first slot for everyone in working hours, provided the partial search and
 * the search that ignores working hours both find another one. A blocking
 * meeting is added where needed to make the partial search wrong, and taken
 * away again when the case cannot be used after all.
 */
function firstSlotForCase(state: CalendarState, meetings: MeetingMaker, candidate: CaseSearch): number | undefined {
  const { emails, partial, duration, range } = candidate;
  const search = (who: readonly string[], respectWorkingHours = true) =>
    firstSlot(state, { emails: who, duration, from: range.from, to: range.to, respectWorkingHours, notBefore: instant(state.now) });
  let first = search(emails);
  if (first === undefined) return undefined;
  let blocker: CalendarEvent | undefined;
  if (first === search(partial)) {
    blocker = meetings.block(candidate.blockable, first, emails);
    if (!blocker) return undefined;
    first = search(emails);
  }
  if (first === undefined || first === search(partial) || first === search(emails, false)) {
    if (blocker) meetings.remove(blocker);
    return undefined;
  }
  return first;
}

/**
 * For a few of the viewer's meetings: the first slot on another day when all
 * its attendees are free in their working hours. The viewer's own first free
 * slot that day and the first slot ignoring working hours must both differ from
 * it, so checking only one calendar, or ignoring time zones, gives a wrong time.
 */
function buildEventCases(state: CalendarState, random: Random, meetings: MeetingMaker, dates: string[]): void {
  const candidates = random.shuffle(
    [...state.events.values()].filter(
      (event) =>
        event.organizer === state.viewer &&
        event.status === 'confirmed' &&
        event.attendees.length >= 2 &&
        event.attendees.some((attendee) => attendee.response !== 'accepted'),
    ),
  );
  for (const event of candidates) {
    if (state.cases.events.length >= CASES_PER_KIND) break;
    const emails = event.attendees.map((attendee) => attendee.email);
    const duration = instant(event.end) - instant(event.start);
    for (const date of dates) {
      const range = viewerDay(state, date);
      // Another day: the meeting's own time must not be in the way of its move.
      if (instant(event.start) < range.to && instant(event.end) > range.from) continue;
      const guest = findPerson(state, random.pick(emails.filter((email) => email !== state.viewer)))!;
      const first = firstSlotForCase(state, meetings, { emails, partial: [state.viewer], blockable: guest, duration, range });
      if (first === undefined) continue;
      state.cases.events.push({
        event_id: event.id,
        title: event.title,
        attendee_emails: sortedEmails(emails),
        date,
        ...slotWindow(range, duration, first),
      });
      dates.splice(dates.indexOf(date), 1);
      break;
    }
  }
}

/** The search window and the first free slot in it, as a case records them. */
function slotWindow(range: { from: number; to: number }, duration: number, first: number) {
  return {
    range_start: formatUtc(range.from),
    range_end: formatUtc(range.to),
    duration_minutes: duration,
    first_start: formatUtc(first),
    first_end: formatUtc(first + duration),
  };
}

/**
 * Slots for the viewer and two colleagues: the first slot on a day when all
 * three are free in their own working hours. The viewer is made busy where the
 * two colleagues alone would first be free, so leaving the organizer out of
 * the search finds a wrong time; ignoring working hours must find another too.
 */
function buildSlotCases(state: CalendarState, random: Random, meetings: MeetingMaker, dates: string[]): void {
  const viewer = findPerson(state, state.viewer)!;
  const others = state.people.filter((person) => person.email !== viewer.email);
  for (const date of [...dates]) {
    if (state.cases.slots.length >= CASES_PER_KIND) break;
    const range = viewerDay(state, date);
    for (let attempt = 0; attempt < 12; attempt++) {
      const pair = random.sample(others, 2).map((person) => person.email);
      const duration = random.pick([30, 45, 60]);
      const emails = [viewer.email, ...pair];
      const first = firstSlotForCase(state, meetings, { emails, partial: pair, blockable: viewer, duration, range });
      if (first === undefined) continue;
      state.cases.slots.push({
        others: pair,
        emails: sortedEmails(emails),
        date,
        ...slotWindow(range, duration, first),
      });
      dates.splice(dates.indexOf(date), 1);
      break;
    }
  }
}

/** 30 minutes with a colleague in another zone at a local time of theirs, free for both. */
function buildLocalCases(state: CalendarState, random: Random): void {
  const viewer = findPerson(state, state.viewer)!;
  const colleagues = random.shuffle(state.people.filter((person) => person.time_zone !== viewer.time_zone));
  for (const person of colleagues) {
    if (state.cases.local.length >= CASES_PER_KIND) break;
    const offset = offsetOf(person.time_zone);
    search: for (const date of random.shuffle(SEEDED_DATES)) {
      for (const local of random.shuffle(LOCAL_MEETING_TIMES)) {
        const start = startOfUtcDate(date) - offset + clockMinutes(local);
        const end = start + 30;
        if (start < instant(state.now) || !isWorking(person, start, end)) continue;
        if (conflictsFor(state, [viewer.email, person.email], start, end).length > 0) continue;
        state.cases.local.push({
          person_email: person.email,
          person_name: person.name,
          time_zone: person.time_zone,
          date,
          local_time: local,
          emails: sortedEmails([viewer.email, person.email]),
          start_utc: formatUtc(start),
          end_utc: formatUtc(end),
        });
        break search;
      }
    }
  }
}

/**
 * Does a case still hold in the current state: its stored answer is what the
 * world's own slot finder gives, and the tempting wrong searches (only some of
 * the calendars, or ignoring working hours) give something else? Generation
 * keeps only the cases that hold; tests check them too.
 */
export function caseStillHolds(state: CalendarState, kind: keyof CalendarCases, index: number): boolean {
  const now = instant(state.now);
  if (kind === 'local') {
    const item = state.cases.local[index]!;
    const person = findPerson(state, item.person_email)!;
    const [start, end] = [instant(item.start_utc), instant(item.end_utc)];
    return isWorking(person, start, end) && conflictsFor(state, item.emails, start, end).length === 0;
  }
  const item = kind === 'slots' ? state.cases.slots[index]! : state.cases.events[index]!;
  const emails = kind === 'slots' ? (item as SlotCase).emails : (item as EventCase).attendee_emails;
  const partial = kind === 'slots' ? (item as SlotCase).others : [state.viewer];
  const search = (who: readonly string[], respectWorkingHours = true) =>
    firstSlot(state, { emails: who, duration: item.duration_minutes, from: instant(item.range_start), to: instant(item.range_end), respectWorkingHours, notBefore: now });
  const first = search(emails);
  return first !== undefined && formatUtc(first) === item.first_start && search(partial) !== first && search(emails, false) !== first;
}
