// Owns the calendar world's scheduling rules, shared by the tools and by seeded
// generation so both agree on them: who is busy when, what counts as someone's
// working hours in their own time zone, where free slots are, and which events
// a proposed time would collide with.

import type { CalendarEvent, CalendarState, Person } from './calendar-model.js';
import { clockMinutes, instant, isWeekday, localDay, MINUTES_PER_DAY, offsetOf } from './calendar-time.js';

/** Free slots start on the hour or the half hour (UTC, which every zone in the table shares). */
export const SLOT_STEP_MINUTES = 30;

export function findPerson(state: CalendarState, email: string): Person | undefined {
  const wanted = email.toLowerCase();
  return state.people.find((person) => person.email === wanted);
}

/** A confirmed event takes up an attendee's time unless they declined it. */
export function blocks(event: CalendarEvent, email: string): boolean {
  return event.status === 'confirmed' && event.attendees.some((attendee) => attendee.email === email && attendee.response !== 'declined');
}

export function overlaps(event: CalendarEvent, from: number, to: number): boolean {
  return instant(event.start) < to && instant(event.end) > from;
}

/** Events that make `email` busy somewhere in [from, to), in start order. */
export function busyEvents(state: CalendarState, email: string, from: number, to: number, excludeId?: string): CalendarEvent[] {
  return [...state.events.values()]
    .filter((event) => event.id !== excludeId && blocks(event, email) && overlaps(event, from, to))
    .sort(byStart);
}

/**
 * Whether busyEvents would find anything: the same checks on the same events
 * in the same order, without collecting and sorting them (slot searches ask
 * this for every candidate start).
 */
function isBusy(state: CalendarState, email: string, from: number, to: number): boolean {
  let busy = false;
  for (const event of state.events.values()) {
    if (blocks(event, email) && overlaps(event, from, to)) busy = true;
  }
  return busy;
}

export function byStart(left: CalendarEvent, right: CalendarEvent): number {
  return left.start < right.start ? -1 : left.start > right.start ? 1 : left.id < right.id ? -1 : left.id > right.id ? 1 : 0;
}

/** Is [from, to) inside one of the person's working days (Monday to Friday, local time)? */
export function isWorking(person: Person, from: number, to: number): boolean {
  const offset = offsetOf(person.time_zone);
  const day = localDay(from, offset);
  if (!isWeekday(day)) return false;
  const midnight = day * MINUTES_PER_DAY - offset;
  return from >= midnight + clockMinutes(person.working_hours.start) && to <= midnight + clockMinutes(person.working_hours.end);
}

export interface Conflict {
  email: string;
  event: CalendarEvent;
}

/** Every attendee whose time [from, to) is already taken, with the event that takes it. */
export function conflictsFor(state: CalendarState, emails: readonly string[], from: number, to: number, excludeId?: string): Conflict[] {
  return emails.flatMap((email) => busyEvents(state, email, from, to, excludeId).map((event) => ({ email, event })));
}

export interface SlotSearch {
  emails: readonly string[];
  duration: number;
  from: number;
  to: number;
  respectWorkingHours: boolean;
  /** Slots never start before this instant (the world's "now"). */
  notBefore: number;
}

/**
 * Every start on the slot grid inside [from, to) where all attendees are free
 * for `duration` minutes (and, when asked, inside each one's working hours).
 */
export function findSlots(state: CalendarState, search: SlotSearch): number[] {
  const people = search.emails.map((email) => findPerson(state, email)!);
  const earliest = Math.max(search.from, search.notBefore);
  const slots: number[] = [];
  for (let start = Math.ceil(earliest / SLOT_STEP_MINUTES) * SLOT_STEP_MINUTES; start + search.duration <= search.to; start += SLOT_STEP_MINUTES) {
    const end = start + search.duration;
    const fits = people.every(
      (person) => (!search.respectWorkingHours || isWorking(person, start, end)) && !isBusy(state, person.email, start, end),
    );
    if (fits) slots.push(start);
  }
  return slots;
}

export function firstSlot(state: CalendarState, search: SlotSearch): number | undefined {
  return findSlots(state, search)[0];
}
