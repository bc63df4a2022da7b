// Owns the shape of the calendar world's state: its people, events and
// attendees, and the hidden scheduling cases tasks are drawn from. The
// generator (calendar-state.ts) and the slot finder (calendar-schedule.ts)
// both work on it, so it lives apart from both.

import type { ResponseStatus, ZoneName } from './calendar-vocabulary.js';

export type EventStatus = 'confirmed' | 'cancelled';

export interface Person {
  email: string;
  name: string;
  time_zone: ZoneName;
  /** Local wall-clock times, Monday to Friday. */
  working_hours: { start: string; end: string };
}

export interface Attendee {
  email: string;
  response: ResponseStatus;
}

export interface CalendarEvent {
  id: string;
  title: string;
  description: string;
  organizer: string;
  /** The organizer is always an attendee, and always first. */
  attendees: Attendee[];
  /** UTC, `YYYY-MM-DDTHH:MM:SSZ`. */
  start: string;
  end: string;
  status: EventStatus;
  /** Bumped by every change, as iCalendar's SEQUENCE. */
  sequence: number;
  cancellation_note: string | null;
}

/** Book the first slot on `date` for the viewer and `others` (hidden: a task's answer). */
export interface SlotCase {
  others: string[];
  /** Sorted; the viewer and `others`: the attendee list the booked event must have. */
  emails: string[];
  date: string;
  range_start: string;
  range_end: string;
  duration_minutes: number;
  first_start: string;
  first_end: string;
}

/** Book 30 minutes with one person at a local time of theirs (hidden: a task's answer). */
export interface LocalCase {
  person_email: string;
  person_name: string;
  time_zone: ZoneName;
  date: string;
  local_time: string;
  emails: string[];
  start_utc: string;
  end_utc: string;
}

/** Move (or follow up) one of the viewer's events to the first free slot on another date (hidden). */
export interface EventCase {
  event_id: string;
  title: string;
  attendee_emails: string[];
  date: string;
  range_start: string;
  range_end: string;
  duration_minutes: number;
  first_start: string;
  first_end: string;
}

export interface CalendarCases {
  slots: SlotCase[];
  local: LocalCase[];
  events: EventCase[];
}

export interface CalendarState {
  organisation: string;
  /** The person the assistant acts for: the organizer of what it creates, the attendee who responds. */
  viewer: string;
  /** The world's fixed logical "now"; nothing may be scheduled before it. */
  now: string;
  people: Person[];
  events: Map<string, CalendarEvent>;
  /** Hidden from the tools: scheduling cases with their answers, for tasks and their predicates. */
  cases: CalendarCases;
  /** New event ids are derived from this salt and a serial, so they are unguessable yet deterministic. */
  id_salt: string;
  next_serial: number;
}

export interface CalendarConfig {
  /** Meetings added on top of the ones every person organizes. */
  extra_meetings?: number;
}
