// Owns reading RFC 3339 date-times (what the JSON Schema `date-time` format
// accepts) by the standard's grammar. Date.parse is not used: V8 rejects some
// valid forms (`+02` offsets, leap seconds) and accepts others by its own rules.

/** The shapes the `date-time` format accepts: `T`, `t` or a space; `Z`, `z`, `+hh`, `+hhmm` or `+hh:mm`. */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)$/;

export interface ParsedDateTime {
  /** Milliseconds since the Unix epoch; a leap second counts as the first instant of the next minute. */
  millis: number;
  /** True when the seconds and any fraction are zero. */
  wholeMinute: boolean;
}

export function parseDateTime(text: string): ParsedDateTime | { problem: string } {
  const match = DATE_TIME.exec(text);
  if (!match) return { problem: `"${text}" is not an RFC 3339 date-time with an offset, e.g. 2026-04-14T09:30:00Z or 2026-04-14T11:30:00+02:00` };
  const [, year, month, day, hour, minute, second, fraction, , sign, offsetHours, offsetMinutes] = match;
  const offsetMinutesTotal = sign === undefined ? 0 : (sign === '-' ? -1 : 1) * (Number(offsetHours) * 60 + Number(offsetMinutes ?? 0));
  const fractionMillis = fraction === undefined ? 0 : Math.floor(Number(fraction) * 1000);
  const local = Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second), fractionMillis);
  return {
    millis: local - offsetMinutesTotal * 60_000,
    wholeMinute: Number(second) === 0 && (fraction === undefined || Number(fraction) === 0),
  };
}

const DAY_MILLIS = 86_400_000;
/** Dates whose day start and end are both inside the range a Date can hold. */
const SAFE_MILLIS = 8.64e15 - 2 * DAY_MILLIS;
const dayPrefixes = new Map<number, string>();

/**
 * `new Date(millis).toISOString()` with a whole second printed without its
 * `.000` (`2026-01-05T09:30:00Z`), as world clocks print time. Worlds print
 * many whole minutes while they generate their state, so a whole minute is
 * put together from its day's date (taken from toISOString once per day) and
 * its hour and minute; anything else is toISOString itself.
 */
export function isoTimestamp(millis: number): string {
  if (millis % 60_000 === 0 && Math.abs(millis) <= SAFE_MILLIS) {
    const day = Math.floor(millis / DAY_MILLIS);
    let prefix = dayPrefixes.get(day);
    if (prefix === undefined) {
      const iso = new Date(day * DAY_MILLIS).toISOString();
      prefix = iso.slice(0, iso.indexOf('T') + 1);
      if (dayPrefixes.size >= 4096) dayPrefixes.clear();
      dayPrefixes.set(day, prefix);
    }
    const minuteOfDay = (millis - day * DAY_MILLIS) / 60_000;
    const hour = Math.floor(minuteOfDay / 60);
    const minute = minuteOfDay % 60;
    return prefix + (hour < 10 ? '0' : '') + hour + (minute < 10 ? ':0' : ':') + minute + ':00Z';
  }
  return new Date(millis).toISOString().replace('.000Z', 'Z');
}
