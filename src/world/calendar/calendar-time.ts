// Owns the calendar world's time arithmetic: instants are whole minutes since
// the Unix epoch, parsed from RFC 3339 date-times (any offset) and written back
// as UTC `Z` strings; local wall-clock times come from the fixed offset table,
// never from the host's clock or time zone database.

import { parseDateTime } from '../../core/date-time.js';
import { ZONE_OFFSETS, type ZoneName } from './calendar-vocabulary.js';

export const MINUTES_PER_DAY = 24 * 60;
const WEEKDAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'] as const;

/**
 * Instants already read. Scheduling reads the same event times over and over
 * (every candidate slot against every event), and parsing is a pure function
 * of the text: a text that reads as an instant is remembered, a bounded number
 * of them. Problems are worked out afresh each time.
 */
const instants = new Map<string, number>();

/** Minutes since the epoch, or why the text is not a whole-minute instant. */
export function parseInstant(text: string): number | { problem: string } {
  const known = instants.get(text);
  if (known !== undefined) return known;
  const parsed = parseDateTime(text);
  if ('problem' in parsed) return parsed;
  if (!parsed.wholeMinute) return { problem: `"${text}" has seconds; calendar times fall on whole minutes (seconds :00)` };
  const minutes = parsed.millis / 60_000;
  if (instants.size >= 16_384) instants.clear();
  instants.set(text, minutes);
  return minutes;
}

/** Parses a date-time this module wrote itself; throws on anything else. */
export function instant(text: string): number {
  const parsed = parseInstant(text);
  if (typeof parsed !== 'number') throw new Error(parsed.problem);
  return parsed;
}

export function formatUtc(minutes: number): string {
  return new Date(minutes * 60_000).toISOString().slice(0, 19) + 'Z';
}

/** Minutes since the epoch at 00:00 UTC of a `YYYY-MM-DD` date. */
export function startOfUtcDate(date: string): number {
  return instant(`${date}T00:00:00Z`);
}

export function offsetOf(zone: ZoneName): number {
  return ZONE_OFFSETS[zone];
}

/** `+02:00`, `-04:00`, `+05:30`. */
export function offsetText(offset: number): string {
  const sign = offset < 0 ? '-' : '+';
  const absolute = Math.abs(offset);
  return `${sign}${pad(Math.floor(absolute / 60))}:${pad(absolute % 60)}`;
}

export interface LocalTime {
  date: string;
  time: string;
  weekday: string;
}

/** The wall-clock date and time at `minutes` in a zone with `offset`. */
export function localTime(minutes: number, offset: number): LocalTime {
  const shifted = new Date((minutes + offset) * 60_000);
  const iso = shifted.toISOString();
  return { date: iso.slice(0, 10), time: iso.slice(11, 16), weekday: WEEKDAY_NAMES[shifted.getUTCDay()]! };
}

const clocks = new Map<string, number>();

/** `HH:MM` → minutes after midnight (remembered, as working hours are read for every slot). */
export function clockMinutes(clock: string): number {
  let known = clocks.get(clock);
  if (known === undefined) {
    const [hours, minutes] = clock.split(':').map(Number);
    known = hours! * 60 + minutes!;
    if (clocks.size >= 4096) clocks.clear();
    clocks.set(clock, known);
  }
  return known;
}

export function clockText(minutes: number): string {
  return `${pad(Math.floor(minutes / 60))}:${pad(minutes % 60)}`;
}

/** The local day number (days since the epoch in that zone) that contains `minutes`. */
export function localDay(minutes: number, offset: number): number {
  return Math.floor((minutes + offset) / MINUTES_PER_DAY);
}

/** Monday to Friday, for a local day number (day 0, 1970-01-01, was a Thursday). */
export function isWeekday(day: number): boolean {
  const weekday = (((day + 4) % 7) + 7) % 7;
  return weekday >= 1 && weekday <= 5;
}

export function nextDate(date: string): string {
  return formatUtc(startOfUtcDate(date) + MINUTES_PER_DAY).slice(0, 10);
}

function pad(value: number): string {
  return String(value).padStart(2, '0');
}
