import { ERROR_CODES, type ErrorCode } from './error-codes.js';

/**
 * The one error type of the service. Services and use cases throw it with a code from the
 * registry; the error mapper turns it into the contract's error body in exactly one place.
 */
export class DomainError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
    /** Extra response headers (Retry-After, Link, Allow, ...). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'DomainError';
    this.status = ERROR_CODES[code];
  }
}

export interface FieldError {
  field: string;
  message: string;
}

/** At most this many field errors are listed; the rest are counted in `fields_omitted`. */
export const MAX_FIELD_ERRORS = 20;

/**
 * Library wordings (class-validator's defaults, ajv's) in the service's form; `$f` is the field.
 * Each rewrites a whole message, so anything else said by the library is kept.
 */
const REWORDED: [RegExp, string][] = [
  [
    /^(?:property \S+ should not exist|is not a known field)$/,
    '$f must not be sent (not a known field)',
  ],
  [/^(?:\S+ )?(?:is required|should not be null or undefined)$/, '$f must be present'],
  [/^\S+ should not be empty$/, '$f must not be empty'],
  [/^each value in \S+ must be (.*)$/s, '$f must hold only values that are $1'],
  [/^each value in \S+ must (.*)$/s, '$f must hold only values that $1'],
  [/^All \S+'s elements must be unique$/, '$f must not hold a value twice'],
  [/^must NOT (.*)$/s, '$f must not $1'],
];

/**
 * A field's message in the one form of every VALIDATION_FAILED answer: "<field> must ...", the
 * field named as in `details.fields[].field` (as the client sent it). Messages written in that form
 * pass as they are; a message naming only the last part of a nested field (class-validator's
 * `operation` for `match.operation`) gets the whole name; the libraries' own wordings are
 * reworded; anything else is kept after "<field> must be valid:" so nothing said is lost.
 */
export function fieldMessage(field: string, message: string): string {
  if (field === '') return message; // a query parameter without a name: nothing to name
  for (const [re, out] of REWORDED) {
    const m = re.exec(message);
    if (m !== null) return out.replace('$f', field).replace('$1', m[1] ?? '');
  }
  const leaf = /([^.[\]]+)(?:\[\d+\])*$/.exec(field)?.[1] ?? field;
  let text = message;
  if (!text.startsWith(`${field} `) && text.startsWith(`${leaf} `)) {
    text = `${field}${text.slice(leaf.length)}`;
  } else if (text.startsWith('must ')) {
    text = `${field} ${text}`;
  }
  return text.startsWith(`${field} must `) ? text : `${field} must be valid: ${message}`;
}

/** The `details` of a VALIDATION_FAILED answer, and its message. */
export function validationDetails(input: FieldError[]): {
  message: string;
  details: { fields: FieldError[]; fields_omitted?: number };
} {
  const all = input.map((f) => ({ field: f.field, message: fieldMessage(f.field, f.message) }));
  const fields = all.slice(0, MAX_FIELD_ERRORS);
  const omitted = all.length - fields.length;
  return {
    message:
      all.length === 1
        ? `Invalid request: ${all[0].message}`
        : `Invalid request: ${all.length} fields failed validation`,
    details: omitted > 0 ? { fields, fields_omitted: omitted } : { fields },
  };
}

export function validationFailed(fields: FieldError[]): DomainError {
  const v = validationDetails(fields);
  return new DomainError('VALIDATION_FAILED', v.message, v.details);
}
