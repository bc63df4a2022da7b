// Owns the behaviour of the calendar world: a shared team calendar whose tools
// look up people and events, find free slots across time zones, and create,
// reschedule, update, cancel and answer events. Arguments arrive already
// checked against the input schemas; this module enforces the rules a schema
// cannot say (people and events must exist, only the organizer may change or
// cancel an event, no double booking without allow_conflict, nothing before
// "now"), and a refused call changes nothing.

import { sha256Hex } from '../../core/hashing.js';
import { copyPlain } from '../../core/json-copy.js';
import type { JsonObject, JsonValue } from '../../core/json-value.js';
import type { ToolOutcome, World } from '../world-contract.js';
import { dispatchTo, fail, succeed, type ToolHandler } from '../tool-handlers.js';
import { byStart, conflictsFor, findPerson, findSlots, isWorking, overlaps, type Conflict } from './calendar-schedule.js';
import { generateCalendarState, type Attendee, type CalendarConfig, type CalendarEvent, type CalendarState, type Person } from './calendar-state.js';
import { formatUtc, instant, localTime, MINUTES_PER_DAY, offsetOf, offsetText, parseInstant } from './calendar-time.js';
import { CALENDAR_TOOLS } from './calendar-tools.js';
import { RESPONSES, SUPPORTED_FROM, SUPPORTED_UNTIL, ZONE_NAMES, type ResponseStatus, type ZoneName } from './calendar-vocabulary.js';


const MAX_EVENT_MINUTES = 480;
const MAX_LIST_DAYS = 31;
const MAX_SLOT_DAYS = 14;

// ---------------------------------------------------------------- arguments

/** A time argument as minutes, or the reason it cannot be used. */
function timeArgument(args: JsonObject, field: string): number | string {
  const parsed = parseInstant(String(args[field]));
  if (typeof parsed !== 'number') return `${field}: ${parsed.problem}.`;
  if (parsed < instant(SUPPORTED_FROM) || parsed > instant(SUPPORTED_UNTIL)) {
    return `${field}: ${formatUtc(parsed)} is outside the period this calendar covers (${SUPPORTED_FROM} to ${SUPPORTED_UNTIL}).`;
  }
  return parsed;
}

function range(args: JsonObject, maxDays: number): { from: number; to: number } | string {
  const from = timeArgument(args, 'time_min');
  if (typeof from === 'string') return from;
  const to = timeArgument(args, 'time_max');
  if (typeof to === 'string') return to;
  if (to <= from) return `time_max (${formatUtc(to)}) must be after time_min (${formatUtc(from)}).`;
  if (to - from > maxDays * MINUTES_PER_DAY) return `The range spans more than ${maxDays} days; ask for ${maxDays} days or fewer at a time.`;
  return { from, to };
}

function unknownPeople(state: CalendarState, emails: readonly string[]): string | undefined {
  const unknown = emails.filter((email) => !findPerson(state, email));
  if (unknown.length === 0) return undefined;
  return `No person with email ${unknown.map((email) => `"${email}"`).join(', ')} in this calendar (addresses here end in @${state.organisation}.example.com; get_person looks one up).`;
}

function findEvent(state: CalendarState, id: unknown): CalendarEvent | string {
  return state.events.get(id as string) ?? `Event ${id} not found; list_events shows a person's events and their ids.`;
}

function describeConflicts(conflicts: readonly Conflict[]): string {
  const lines = conflicts.slice(0, 4).map(({ email, event }) => `${email} has "${event.title}" (${event.id}) ${event.start}–${event.end}`);
  const more = conflicts.length > 4 ? ` and ${conflicts.length - 4} more` : '';
  return `Conflict: ${lines.join('; ')}${more}. Pick a free time (find_free_slots), or pass allow_conflict: true to double-book.`;
}

/** The span a write asks for: start plus end or a length, or keeping `keep` minutes. */
function spanArgument(state: CalendarState, args: JsonObject, keep?: number): { start: number; end: number } | string {
  const start = timeArgument(args, 'start');
  if (typeof start === 'string') return start;
  let end: number;
  if (args.end !== undefined) {
    if (args.duration_minutes !== undefined) return 'Give either end or duration_minutes, not both.';
    const parsed = timeArgument(args, 'end');
    if (typeof parsed === 'string') return parsed;
    end = parsed;
  } else if (args.duration_minutes !== undefined) {
    end = start + (args.duration_minutes as number);
  } else if (keep !== undefined) {
    end = start + keep;
  } else {
    return 'Give either end or duration_minutes.';
  }
  if (start < instant(state.now)) return `start ${formatUtc(start)} is in the past; it is now ${state.now}.`;
  if (end <= start) return `end (${formatUtc(end)}) must be after start (${formatUtc(start)}).`;
  if (end - start > MAX_EVENT_MINUTES) return `An event may last at most ${MAX_EVENT_MINUTES} minutes; this one would last ${end - start}.`;
  return { start, end };
}

// ---------------------------------------------------------------- views

function responseCounts(event: CalendarEvent): Record<ResponseStatus, number> {
  const counts = Object.fromEntries(RESPONSES.map((name) => [name, 0])) as Record<ResponseStatus, number>;
  for (const attendee of event.attendees) counts[attendee.response] += 1;
  return counts;
}

function eventView(event: CalendarEvent): JsonObject {
  return {
    id: event.id,
    title: event.title,
    description: event.description,
    organizer: event.organizer,
    attendees: event.attendees.map((attendee) => ({ ...attendee })),
    start: event.start,
    end: event.end,
    duration_minutes: instant(event.end) - instant(event.start),
    status: event.status,
    sequence: event.sequence,
    cancellation_note: event.cancellation_note,
    response_counts: responseCounts(event),
  };
}

function personView(state: CalendarState, person: Person): JsonObject {
  return {
    email: person.email,
    name: person.name,
    time_zone: person.time_zone,
    utc_offset: offsetText(offsetOf(person.time_zone)),
    working_hours: { ...person.working_hours, days: 'Monday to Friday' },
    is_you: person.email === state.viewer,
  };
}

function localView(event: CalendarEvent, zone: ZoneName): JsonObject {
  const offset = offsetOf(zone);
  const start = localTime(instant(event.start), offset);
  const end = localTime(instant(event.end), offset);
  return {
    time_zone: zone,
    utc_offset: offsetText(offset),
    start_date: start.date,
    start_time: start.time,
    end_date: end.date,
    end_time: end.time,
    weekday: start.weekday,
  };
}

function writeResult(state: CalendarState, event: CalendarEvent): ToolOutcome {
  const from = instant(event.start);
  const to = instant(event.end);
  const outside = event.attendees
    .map((attendee) => findPerson(state, attendee.email)!)
    .filter((person) => !isWorking(person, from, to))
    .map((person) => person.email);
  return succeed({ event: eventView(event), outside_working_hours: outside });
}

function notOrganizer(state: CalendarState, event: CalendarEvent, action: string): string | undefined {
  if (event.organizer === state.viewer) return undefined;
  const attending = event.attendees.some((attendee) => attendee.email === state.viewer);
  return (
    `Only the organizer (${event.organizer}) can ${action} "${event.title}" (${event.id}). ` +
    (attending ? 'You are an attendee: use respond_to_event to decline it if you cannot come.' : 'You are not invited to it.')
  );
}

function newEventId(state: CalendarState): string {
  for (;;) {
    const id = `ev-${sha256Hex(`${state.id_salt}:${state.next_serial++}`).slice(0, 6)}`;
    if (!state.events.has(id)) return id;
  }
}

// ---------------------------------------------------------------- tools

const handlers: Record<string, ToolHandler<CalendarState>> = {
  get_person(state, args) {
    const email = (args.email as string | undefined) ?? state.viewer;
    const person = findPerson(state, email);
    return person ? succeed({ person: personView(state, person) }) : fail(unknownPeople(state, [email])!);
  },

  list_events(state, args) {
    const email = (args.email as string).toLowerCase();
    const unknown = unknownPeople(state, [email]);
    if (unknown) return fail(unknown);
    const span = range(args, MAX_LIST_DAYS);
    if (typeof span === 'string') return fail(span);
    const query = (args.query as string | undefined)?.toLowerCase();
    const events = [...state.events.values()]
      .filter((event) => event.attendees.some((attendee) => attendee.email === email))
      .filter((event) => args.include_cancelled === true || event.status === 'confirmed')
      .filter((event) => overlaps(event, span.from, span.to))
      .filter((event) => query === undefined || event.title.toLowerCase().includes(query))
      .sort(byStart)
      .map((event) => ({
        id: event.id,
        title: event.title,
        start: event.start,
        end: event.end,
        organizer: event.organizer,
        status: event.status,
        response: event.attendees.find((attendee) => attendee.email === email)!.response,
      }));
    return succeed({ email, time_min: formatUtc(span.from), time_max: formatUtc(span.to), total: events.length, events });
  },

  get_event(state, args) {
    const event = findEvent(state, args.event_id);
    if (typeof event === 'string') return fail(event);
    const value: JsonObject = { event: eventView(event) };
    if (args.time_zone !== undefined) value.local = localView(event, args.time_zone as ZoneName);
    return succeed(value);
  },

  list_attendees(state, args) {
    const event = findEvent(state, args.event_id);
    if (typeof event === 'string') return fail(event);
    const start = instant(event.start);
    const attendees = event.attendees
      .filter((attendee) => args.response_status === undefined || attendee.response === args.response_status)
      .map((attendee) => {
        const person = findPerson(state, attendee.email)!;
        const local = localTime(start, offsetOf(person.time_zone));
        return {
          email: attendee.email,
          name: person.name,
          response: attendee.response,
          is_organizer: attendee.email === event.organizer,
          time_zone: person.time_zone,
          local_start_date: local.date,
          local_start_time: local.time,
        };
      });
    return succeed({ event_id: event.id, title: event.title, total: attendees.length, attendees });
  },

  find_free_slots(state, args) {
    const emails = (args.attendees as string[]).map((email) => email.toLowerCase());
    const unknown = unknownPeople(state, emails);
    if (unknown) return fail(unknown);
    const span = range(args, MAX_SLOT_DAYS);
    if (typeof span === 'string') return fail(span);
    const duration = args.duration_minutes as number;
    if (span.to - span.from < duration) return fail(`The range is ${span.to - span.from} minutes long, shorter than duration_minutes (${duration}).`);
    const respectWorkingHours = args.respect_working_hours !== false;
    const starts = findSlots(state, { emails, duration, from: span.from, to: span.to, respectWorkingHours, notBefore: instant(state.now) });
    const limit = (args.max_results as number | undefined) ?? 5;
    return succeed({
      attendees: emails,
      duration_minutes: duration,
      respect_working_hours: respectWorkingHours,
      total: starts.length,
      slots: starts.slice(0, limit).map((start) => ({ start: formatUtc(start), end: formatUtc(start + duration) })),
    });
  },

  create_event(state, args) {
    const invited = [...new Set((args.attendees as string[]).map((email) => email.toLowerCase()))].filter((email) => email !== state.viewer);
    const unknown = unknownPeople(state, invited);
    if (unknown) return fail(unknown);
    const span = spanArgument(state, args);
    if (typeof span === 'string') return fail(span);
    const everyone = [state.viewer, ...invited];
    if (args.allow_conflict !== true) {
      const conflicts = conflictsFor(state, everyone, span.start, span.end);
      if (conflicts.length > 0) return fail(describeConflicts(conflicts));
    }
    const event: CalendarEvent = {
      id: newEventId(state),
      title: args.title as string,
      description: (args.description as string | undefined) ?? '',
      organizer: state.viewer,
      attendees: everyone.map((email): Attendee => ({ email, response: email === state.viewer ? 'accepted' : 'needs_action' })),
      start: formatUtc(span.start),
      end: formatUtc(span.end),
      status: 'confirmed',
      sequence: 0,
      cancellation_note: null,
    };
    state.events.set(event.id, event);
    return writeResult(state, event);
  },

  reschedule_event(state, args) {
    const event = findEvent(state, args.event_id);
    if (typeof event === 'string') return fail(event);
    const refused = notOrganizer(state, event, 'reschedule');
    if (refused) return fail(refused);
    if (event.status === 'cancelled') return fail(`"${event.title}" (${event.id}) is cancelled; create a new event instead.`);
    const span = spanArgument(state, args, instant(event.end) - instant(event.start));
    if (typeof span === 'string') return fail(span);
    if (formatUtc(span.start) === event.start && formatUtc(span.end) === event.end) {
      return fail(`"${event.title}" (${event.id}) already runs ${event.start}–${event.end}; nothing to change.`);
    }
    if (args.allow_conflict !== true) {
      const attendees = event.attendees.map((attendee) => attendee.email);
      const conflicts = conflictsFor(state, attendees, span.start, span.end, event.id);
      if (conflicts.length > 0) return fail(describeConflicts(conflicts));
    }
    event.start = formatUtc(span.start);
    event.end = formatUtc(span.end);
    for (const attendee of event.attendees) if (attendee.email !== event.organizer) attendee.response = 'needs_action';
    event.sequence += 1;
    return writeResult(state, event);
  },

  update_event(state, args) {
    const event = findEvent(state, args.event_id);
    if (typeof event === 'string') return fail(event);
    const refused = notOrganizer(state, event, 'update');
    if (refused) return fail(refused);
    if (event.status === 'cancelled') return fail(`"${event.title}" (${event.id}) is cancelled and can no longer be changed.`);
    const fields = args.fields as JsonObject;
    const adding = ((fields.add_attendees as string[] | undefined) ?? []).map((email) => email.toLowerCase());
    const removing = ((fields.remove_attendees as string[] | undefined) ?? []).map((email) => email.toLowerCase());
    const invited = new Set(event.attendees.map((attendee) => attendee.email));
    const unknown = unknownPeople(state, [...adding, ...removing]);
    if (unknown) return fail(unknown);
    const both = adding.filter((email) => removing.includes(email));
    if (both.length > 0) return fail(`${both.join(', ')} cannot be both added and removed.`);
    const already = adding.filter((email) => invited.has(email));
    if (already.length > 0) return fail(`Already invited to "${event.title}": ${already.join(', ')}.`);
    const absent = removing.filter((email) => !invited.has(email));
    if (absent.length > 0) return fail(`Not invited to "${event.title}", so cannot be removed: ${absent.join(', ')}.`);
    if (removing.includes(event.organizer)) return fail(`The organizer (${event.organizer}) cannot be removed; cancel the event instead.`);
    if (adding.length > 0 && args.allow_conflict !== true) {
      const conflicts = conflictsFor(state, adding, instant(event.start), instant(event.end));
      if (conflicts.length > 0) return fail(describeConflicts(conflicts));
    }
    if (fields.title !== undefined) event.title = fields.title as string;
    if (fields.description !== undefined) event.description = fields.description as string;
    event.attendees = event.attendees.filter((attendee) => !removing.includes(attendee.email));
    for (const email of adding) event.attendees.push({ email, response: 'needs_action' });
    event.sequence += 1;
    return writeResult(state, event);
  },

  cancel_event(state, args) {
    const event = findEvent(state, args.event_id);
    if (typeof event === 'string') return fail(event);
    const refused = notOrganizer(state, event, 'cancel');
    if (refused) return fail(refused);
    if (event.status === 'cancelled') return fail(`"${event.title}" (${event.id}) is already cancelled.`);
    if (instant(event.start) <= instant(state.now)) return fail(`"${event.title}" (${event.id}) has already started; only future events can be cancelled.`);
    event.status = 'cancelled';
    event.cancellation_note = (args.note as string | undefined) ?? null;
    event.sequence += 1;
    return succeed({ event: eventView(event) });
  },

  respond_to_event(state, args) {
    const event = findEvent(state, args.event_id);
    if (typeof event === 'string') return fail(event);
    if (event.status === 'cancelled') return fail(`"${event.title}" (${event.id}) is cancelled; there is nothing to respond to.`);
    const seat = event.attendees.find((attendee) => attendee.email === state.viewer);
    if (!seat) return fail(`You (${state.viewer}) are not invited to "${event.title}" (${event.id}).`);
    if (event.organizer === state.viewer) {
      return fail(`You organize "${event.title}" (${event.id}), so you do not respond to it: cancel_event calls it off, reschedule_event moves it.`);
    }
    seat.response = args.response as ResponseStatus;
    return succeed({ event: eventView(event), your_response: seat.response });
  },
};

// ---------------------------------------------------------------- snapshot

/**
 * An event as predicates see it: the stored fields plus derived ones that
 * tools show in other shapes (length, response counts, sorted attendee
 * emails, each attendee's local start), so lanes can draw and check them.
 */
function snapshotEvent(state: CalendarState, event: CalendarEvent): JsonObject {
  const start = instant(event.start);
  return {
    id: event.id,
    title: event.title,
    description: event.description,
    organizer: event.organizer,
    attendees: event.attendees.map((attendee) => {
      const local = localTime(start, offsetOf(findPerson(state, attendee.email)!.time_zone));
      return { email: attendee.email, response: attendee.response, local_start_date: local.date, local_start_time: local.time };
    }),
    attendee_emails: event.attendees.map((attendee) => attendee.email).sort(),
    attendee_count: event.attendees.length,
    response_counts: responseCounts(event),
    start: event.start,
    end: event.end,
    duration_minutes: instant(event.end) - start,
    status: event.status,
    sequence: event.sequence,
    cancellation_note: event.cancellation_note,
  };
}

export const calendarWorld: World<CalendarState> = {
  name: 'calendar',
  version: '1.0.0',
  description:
    'A shared team calendar across time zones: look up people and events, find free slots in everyone\'s working hours, ' +
    'and create, reschedule, update, cancel or answer events, with conflicts refused unless asked for.',
  tools: CALENDAR_TOOLS,
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      extra_meetings: {
        type: 'integer',
        minimum: 0,
        maximum: 30,
        default: 14,
        description: 'Meetings added at random on top of the ones every person organizes.',
      },
    },
  },
  init(random, config) {
    return generateCalendarState(random, config as CalendarConfig);
  },
  call: dispatchTo('calendar', handlers),
  snapshot(state): JsonValue {
    // Built fresh from the state, so an initial snapshot never changes when the live state does.
    const events: Record<string, JsonValue> = {};
    for (const id of [...state.events.keys()].sort()) events[id] = snapshotEvent(state, state.events.get(id)!);
    return copyPlain({
      organisation: state.organisation,
      viewer: state.viewer,
      now: state.now,
      time_zones: Object.fromEntries(ZONE_NAMES.map((zone) => [zone, offsetText(offsetOf(zone))])),
      people: state.people.map((person) => {
        const { is_you: _same, ...view } = personView(state, person);
        return { ...view, is_viewer: person.email === state.viewer };
      }),
      events,
      cases: state.cases as unknown as JsonValue,
      id_salt: state.id_salt,
      next_serial: state.next_serial,
    });
  },
};
