import { ValidateBy } from 'class-validator';
import { validationFailed } from '../errors/domain-error.js';

/** The last millisecond ISO 8601 writes with four year digits: later instants are clamped to it. */
export const LAST_INSTANT = '9999-12-31T23:59:59.999Z';
const LAST_MS = Date.parse(LAST_INSTANT);

/**
 * A date, or a date-time with Z or an offset: every RFC 3339 date-time (`format: date-time`: T or
 * t, Z or z, any number of fraction digits, a leap second), and ISO 8601's shorter forms without
 * seconds. Upper and lower case are the same (RFC 3339 5.6 NOTE).
 */
const INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?(?:([Zz])|([+-])(\d{2}):(\d{2})))?$/;

/** What a time value must be (every parser of one says it with these words). */
export function instantMessage(field: string): string {
  return `${field} must be an ISO 8601 date, or date-time with Z or an offset (send + as %2B)`;
}

/**
 * Epoch milliseconds of a date or zoned date-time (see {@link INSTANT}), NaN when it is not one
 * or names no real time (February 30, hour 24, offset +24:00). A leap second (:60) reads as the
 * last millisecond of the second before it: stored times have no :60. Fraction digits past the
 * millisecond are dropped here; see {@link instant} for the rounding of window bounds.
 */
export function parseInstant(value: string): number {
  const m = INSTANT.exec(value);
  if (m === null) return Number.NaN;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const [h, mi, s] = [Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0)];
  const daysInMonth = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth || h > 23 || mi > 59 || s > 60) {
    return Number.NaN;
  }
  let offsetMinutes = 0;
  if (m[9] !== undefined) {
    const [oh, om] = [Number(m[10]), Number(m[11])];
    if (oh > 23 || om > 59) return Number.NaN;
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const utc = new Date(0);
  utc.setUTCFullYear(y, mo - 1, d); // Date.UTC would read years 0..99 as 1900..1999
  utc.setUTCHours(h, mi, Math.min(s, 59), 0);
  const ms = s === 60 ? 999 : Number(((m[7] ?? '.0') + '00').slice(1, 4));
  return utc.getTime() + ms - offsetMinutes * 60_000;
}

/** A body or query field that must be a date or zoned date-time ({@link parseInstant}). */
export function IsInstant(): PropertyDecorator {
  return ValidateBy({
    name: 'isInstant',
    validator: {
      validate: (value: unknown) => typeof value === 'string' && !Number.isNaN(parseInstant(value)),
      defaultMessage: (args) => instantMessage(args?.property ?? 'value'),
    },
  });
}

/**
 * An ISO 8601 query value (the `from`/`to` style windows of the lists and the export) as stored:
 * UTC, milliseconds; undefined when absent. A date (UTC midnight), or a date-time with Z or an
 * offset: a zone-less time would be read in the server's own time zone, so it is refused.
 */
export function instant(value: string | undefined, field: string): string | undefined {
  if (value === undefined) return undefined;
  let ms = parseInstant(value);
  if (Number.isNaN(ms)) {
    throw validationFailed([{ field, message: instantMessage(field) }]);
  }
  // Times are stored to the millisecond: finer digits round up, so `created_to=...00.337999Z`
  // keeps an order of .337 and `created_from=...00.3371Z` leaves it out.
  if (/\.\d{3}\d*[1-9]/.test(value)) ms += 1;
  // Stored times are compared as text: '+010000-...' would sort before every one of them.
  return new Date(Math.min(ms, LAST_MS)).toISOString();
}
