import { validationFailed } from '../errors/domain-error.js';

/** The last millisecond ISO 8601 writes with four year digits: later instants are clamped to it. */
export const LAST_INSTANT = '9999-12-31T23:59:59.999Z';
const LAST_MS = Date.parse(LAST_INSTANT);

const INSTANT =
  /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2}))?$/i;

/** What a time-window query value must be (the DTOs' strict calendar check says it too). */
export function instantMessage(field: string): string {
  return `${field} must be an ISO 8601 date, or date-time with Z or an offset (send + as %2B)`;
}

/**
 * An ISO 8601 query value (the `from`/`to` style windows of the lists and the export) as stored:
 * UTC, milliseconds; undefined when absent. A date (UTC midnight), or a date-time with Z or an
 * offset: a zone-less time would be read in the server's own time zone, so it is refused.
 */
export function instant(value: string | undefined, field: string): string | undefined {
  if (value === undefined) return undefined;
  let ms = INSTANT.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms)) {
    throw validationFailed([
      {
        field,
        message: instantMessage(field),
      },
    ]);
  }
  // Times are stored to the millisecond: finer digits round up, so `created_to=...00.337999Z`
  // keeps an order of .337 and `created_from=...00.3371Z` leaves it out.
  if (/\.\d{3}\d*[1-9]/.test(value)) ms += 1;
  // Stored times are compared as text: '+010000-...' would sort before every one of them.
  return new Date(Math.min(ms, LAST_MS)).toISOString();
}
