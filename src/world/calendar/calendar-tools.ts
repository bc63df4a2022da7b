// Owns the calendar world's tool catalog: names, descriptions and the JSON
// Schemas (draft 2020-12) of inputs and outputs that clients see in tools/list,
// and the claim patterns that tie sentences of a final answer to a tool.

import type { JsonObject } from '../../core/json-value.js';
import type { ToolSpec } from '../world-contract.js';
import { claimSubject } from '../claim-subject.js';
import { objectSchema } from '../tool-schema.js';
import { RESPONSES, ZONE_NAMES } from './calendar-vocabulary.js';

const CLAIM_SUBJECT = claimSubject();

const email: JsonObject = { type: 'string', format: 'email', maxLength: 120, description: 'A person\'s email address, e.g. ines.okafor@northwind.example.com.' };
const eventId: JsonObject = { type: 'string', pattern: '^ev-[0-9a-f]{6}$', description: 'An event id, e.g. ev-3fa9c2.' };
const dateTime = (description: string): JsonObject => ({ type: 'string', format: 'date-time', description });
const timeZone: JsonObject = { type: 'string', enum: [...ZONE_NAMES], description: 'An IANA time zone name, e.g. Europe/Berlin.' };
const response: JsonObject = { type: 'string', enum: [...RESPONSES] };
const duration: JsonObject = {
  type: 'integer',
  minimum: 15,
  maximum: 480,
  multipleOf: 15,
  description: 'Length in minutes: 15 to 480, a multiple of 15.',
};
const utc: JsonObject = { type: 'string', format: 'date-time', pattern: 'Z$' };
const clock: JsonObject = { type: 'string', pattern: '^[0-2][0-9]:[0-5][0-9]$' };
const offset: JsonObject = { type: 'string', pattern: '^[+-][0-9]{2}:[0-9]{2}$' };

const attendee = objectSchema({ email: { type: 'string', format: 'email' }, response }, ['email', 'response']);

const event = objectSchema(
  {
    id: { type: 'string' },
    title: { type: 'string' },
    description: { type: 'string' },
    organizer: { type: 'string', format: 'email' },
    attendees: { type: 'array', items: attendee, minItems: 1 },
    start: utc,
    end: utc,
    duration_minutes: { type: 'integer', minimum: 1 },
    status: { type: 'string', enum: ['confirmed', 'cancelled'] },
    sequence: { type: 'integer', minimum: 0 },
    cancellation_note: { type: ['string', 'null'] },
    response_counts: objectSchema(
      Object.fromEntries(RESPONSES.map((name) => [name, { type: 'integer', minimum: 0 }])),
      [...RESPONSES],
    ),
  },
  ['id', 'title', 'description', 'organizer', 'attendees', 'start', 'end', 'duration_minutes', 'status', 'sequence', 'cancellation_note', 'response_counts'],
);

const eventSummary = objectSchema(
  {
    id: { type: 'string' },
    title: { type: 'string' },
    start: utc,
    end: utc,
    organizer: { type: 'string', format: 'email' },
    status: { type: 'string', enum: ['confirmed', 'cancelled'] },
    response: { ...response, description: "The listed person's own response." },
  },
  ['id', 'title', 'start', 'end', 'organizer', 'status', 'response'],
);

const local = objectSchema(
  {
    time_zone: timeZone,
    utc_offset: offset,
    start_date: { type: 'string', format: 'date' },
    start_time: clock,
    end_date: { type: 'string', format: 'date' },
    end_time: clock,
    weekday: { type: 'string' },
  },
  ['time_zone', 'utc_offset', 'start_date', 'start_time', 'end_date', 'end_time', 'weekday'],
);

const person = objectSchema(
  {
    email: { type: 'string', format: 'email' },
    name: { type: 'string' },
    time_zone: timeZone,
    utc_offset: { ...offset, description: 'The zone\'s UTC offset, fixed for the whole period this calendar covers.' },
    working_hours: objectSchema({ start: clock, end: clock, days: { type: 'string' } }, ['start', 'end', 'days']),
    is_you: { type: 'boolean' },
  },
  ['email', 'name', 'time_zone', 'utc_offset', 'working_hours', 'is_you'],
);

const writeResult = objectSchema(
  {
    event,
    outside_working_hours: {
      type: 'array',
      items: { type: 'string', format: 'email' },
      description: 'Attendees for whom the event falls outside their working hours (allowed, but worth knowing).',
    },
  },
  ['event', 'outside_working_hours'],
);

const TIMES =
  'Times are RFC 3339 date-times with an offset (2026-04-14T09:30:00Z or 2026-04-14T11:30:00+02:00) on whole minutes; ' +
  'the calendar stores and returns UTC. It covers 2026-04-06 to 2026-10-03, where every zone keeps one UTC offset.';

export const CALENDAR_TOOLS: readonly ToolSpec[] = [
  {
    name: 'get_person',
    claims: [`${CLAIM_SUBJECT}looked up\\b`],
    annotations: { readOnlyHint: true },
    description:
      'Get a person by email: name, IANA time zone, its UTC offset, and working hours in their own local time (Monday to Friday). ' +
      'Without an email, returns you: the person this assistant acts for.',
    inputSchema: objectSchema({ email }, []),
    outputSchema: objectSchema({ person }, ['person']),
  },
  {
    name: 'list_events',
    claims: [`${CLAIM_SUBJECT}(?:checked|looked at|went through)\\s+(?:\\S+\\s+)?calendar\\b`],
    annotations: { readOnlyHint: true },
    description:
      "List one person's events (as organizer or attendee) that overlap [time_min, time_max), in start order, with that person's response. " +
      'Cancelled events are left out unless include_cancelled is true; `query` keeps only titles containing it (case-insensitive). ' +
      `The range may span at most 31 days. ${TIMES}`,
    inputSchema: objectSchema(
      {
        email,
        time_min: dateTime('Start of the range (inclusive).'),
        time_max: dateTime('End of the range (exclusive); after time_min.'),
        query: { type: 'string', minLength: 1, maxLength: 100, description: 'Only events whose title contains this text.' },
        include_cancelled: { type: 'boolean', default: false },
      },
      ['email', 'time_min', 'time_max'],
    ),
    outputSchema: objectSchema(
      {
        email: { type: 'string', format: 'email' },
        time_min: utc,
        time_max: utc,
        total: { type: 'integer', minimum: 0 },
        events: { type: 'array', items: eventSummary },
      },
      ['email', 'time_min', 'time_max', 'total', 'events'],
    ),
  },
  {
    name: 'get_event',
    claims: [`${CLAIM_SUBJECT}(?:checked|looked at|looked up|opened)\\s+(?:the\\s+)?(?:event|meeting)\\b`],
    annotations: { readOnlyHint: true },
    description:
      'Get one event by id: title, organizer, attendees with their responses, UTC start and end, status. ' +
      'With time_zone, also `local`: the start and end as wall-clock date and time in that zone.',
    inputSchema: objectSchema({ event_id: eventId, time_zone: { ...timeZone, description: 'Also show the times in this zone, e.g. Asia/Tokyo.' } }, ['event_id']),
    outputSchema: objectSchema({ event, local }, ['event']),
  },
  {
    name: 'list_attendees',
    claims: [`${CLAIM_SUBJECT}(?:checked|looked at|went through)\\s+(?:the\\s+)?(?:guest|attendee|invite[e]?)\\s+list\\b`],
    annotations: { readOnlyHint: true },
    description:
      "List an event's attendees with name, response, time zone and the event's start in each attendee's local time. " +
      'response_status keeps only attendees with that response (needs_action: has not responded yet).',
    inputSchema: objectSchema({ event_id: eventId, response_status: { ...response, description: 'Only attendees with this response.' } }, ['event_id']),
    outputSchema: objectSchema(
      {
        event_id: { type: 'string' },
        title: { type: 'string' },
        total: { type: 'integer', minimum: 0 },
        attendees: {
          type: 'array',
          items: objectSchema(
            {
              email: { type: 'string', format: 'email' },
              name: { type: 'string' },
              response,
              is_organizer: { type: 'boolean' },
              time_zone: timeZone,
              local_start_date: { type: 'string', format: 'date' },
              local_start_time: clock,
            },
            ['email', 'name', 'response', 'is_organizer', 'time_zone', 'local_start_date', 'local_start_time'],
          ),
        },
      },
      ['event_id', 'title', 'total', 'attendees'],
    ),
  },
  {
    name: 'find_free_slots',
    claims: [`${CLAIM_SUBJECT}(?:searched|looked|checked)\\s+for\\s+(?:a\\s+|the\\s+)?(?:free|open|common)\\s+(?:slot|time)`],
    annotations: { readOnlyHint: true },
    description:
      'Find times when every listed attendee is free for duration_minutes inside [time_min, time_max): no confirmed event they have not declined, ' +
      "and (unless respect_working_hours is false) inside each attendee's working hours in their own time zone. " +
      'Slots start on the hour or half hour, never before now, earliest first; at most max_results of them, with the total count. ' +
      `The range may span at most 14 days. ${TIMES}`,
    inputSchema: objectSchema(
      {
        attendees: { type: 'array', items: email, minItems: 1, maxItems: 10, uniqueItems: true, description: 'Everyone who must be free, including yourself if you attend.' },
        duration_minutes: duration,
        time_min: dateTime('Earliest start (inclusive).'),
        time_max: dateTime('Latest end (inclusive); after time_min.'),
        respect_working_hours: { type: 'boolean', default: true },
        max_results: { type: 'integer', minimum: 1, maximum: 20, default: 5 },
      },
      ['attendees', 'duration_minutes', 'time_min', 'time_max'],
    ),
    outputSchema: objectSchema(
      {
        attendees: { type: 'array', items: { type: 'string', format: 'email' } },
        duration_minutes: { type: 'integer' },
        respect_working_hours: { type: 'boolean' },
        total: { type: 'integer', minimum: 0 },
        slots: { type: 'array', items: objectSchema({ start: utc, end: utc }, ['start', 'end']) },
      },
      ['attendees', 'duration_minutes', 'respect_working_hours', 'total', 'slots'],
    ),
  },
  {
    name: 'create_event',
    claims: [`${CLAIM_SUBJECT}(?:created|booked|scheduled|set up|put)\\b`, '^(?:created|booked|scheduled)\\b'],
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    description:
      'Create an event that you organize (you are added as an attendee who accepted); the other attendees must exist and are invited. ' +
      'Give either end or duration_minutes. Fails if any attendee (you included) already has a confirmed event at that time that they have not declined, ' +
      `unless allow_conflict is true (a double booking). ${TIMES}`,
    inputSchema: objectSchema(
      {
        title: { type: 'string', minLength: 3, maxLength: 120 },
        attendees: { type: 'array', items: email, minItems: 1, maxItems: 10, uniqueItems: true },
        start: dateTime('When it starts; not before now.'),
        end: dateTime('When it ends; give this or duration_minutes.'),
        duration_minutes: { ...duration, description: 'Length in minutes; give this or end.' },
        description: { type: 'string', maxLength: 2000 },
        allow_conflict: { type: 'boolean', default: false, description: 'Book even if it overlaps an attendee\'s existing event.' },
      },
      ['title', 'attendees', 'start'],
      { oneOf: [{ required: ['end'] }, { required: ['duration_minutes'] }] },
    ),
    outputSchema: writeResult,
  },
  {
    name: 'reschedule_event',
    claims: [`${CLAIM_SUBJECT}(?:rescheduled|moved)\\b`, '^(?:rescheduled|moved)\\b'],
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
    description:
      'Move an event you organize to a new start; it keeps its length unless end or duration_minutes is given. Every attendee but you is asked to respond again. ' +
      `Fails on a conflict for any attendee unless allow_conflict is true. Only the organizer can reschedule. ${TIMES}`,
    inputSchema: objectSchema(
      {
        event_id: eventId,
        start: dateTime('The new start; not before now.'),
        end: dateTime('The new end (optional).'),
        duration_minutes: { ...duration, description: 'A new length (optional; not with end).' },
        allow_conflict: { type: 'boolean', default: false },
      },
      ['event_id', 'start'],
      { not: { required: ['end', 'duration_minutes'] } },
    ),
    outputSchema: writeResult,
  },
  {
    name: 'update_event',
    claims: [`${CLAIM_SUBJECT}(?:updated|renamed|invited|added\\s+\\S+\\s+to|removed\\s+\\S+\\s+from)\\b`],
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
    description:
      'Change an event you organize: its title or description, or invite or remove attendees (not its time: use reschedule_event). ' +
      'New attendees must exist and not be invited already; they must be free unless allow_conflict is true. Only the organizer can update.',
    inputSchema: objectSchema(
      {
        event_id: eventId,
        fields: objectSchema(
          {
            title: { type: 'string', minLength: 3, maxLength: 120 },
            description: { type: 'string', maxLength: 2000 },
            add_attendees: { type: 'array', items: email, minItems: 1, maxItems: 10, uniqueItems: true },
            remove_attendees: { type: 'array', items: email, minItems: 1, maxItems: 10, uniqueItems: true },
          },
          [],
          { minProperties: 1 },
        ),
        allow_conflict: { type: 'boolean', default: false },
      },
      ['event_id', 'fields'],
    ),
    outputSchema: writeResult,
  },
  {
    name: 'cancel_event',
    claims: [`${CLAIM_SUBJECT}cancell?ed\\b`, '^cancell?ed\\b'],
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
    description:
      'Cancel an event you organize, for everyone, with an optional note to the attendees. Only the organizer can cancel; ' +
      'an attendee who cannot come declines with respond_to_event instead. A cancelled event cannot be cancelled again.',
    inputSchema: objectSchema({ event_id: eventId, note: { type: 'string', minLength: 1, maxLength: 500 } }, ['event_id']),
    outputSchema: objectSchema({ event }, ['event']),
  },
  {
    name: 'respond_to_event',
    claims: [`${CLAIM_SUBJECT}(?:declined|accepted|tentatively accepted|responded|RSVP'?d)\\b`, '^(?:declined|accepted)\\b'],
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
    description:
      "Answer an invitation as yourself: accepted, declined or tentative. You must be an attendee and not the organizer; the event must not be cancelled.",
    inputSchema: objectSchema(
      {
        event_id: eventId,
        response: { type: 'string', enum: ['accepted', 'declined', 'tentative'] },
        comment: { type: 'string', maxLength: 500 },
      },
      ['event_id', 'response'],
    ),
    outputSchema: objectSchema({ event, your_response: response }, ['event', 'your_response']),
  },
];
