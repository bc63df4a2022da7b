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
