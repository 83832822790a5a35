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

/** The `details` of a VALIDATION_FAILED answer, and its message. */
export function validationDetails(all: FieldError[]): {
  message: string;
  details: { fields: FieldError[]; fields_omitted?: number };
} {
  const fields = all.slice(0, MAX_FIELD_ERRORS);
  const omitted = all.length - fields.length;
  return {
    message:
      all.length === 1
        ? `Invalid request: ${all[0].field}: ${all[0].message}`
        : `Invalid request: ${all.length} fields failed validation`,
    details: omitted > 0 ? { fields, fields_omitted: omitted } : { fields },
  };
}

export function validationFailed(fields: FieldError[]): DomainError {
  const v = validationDetails(fields);
  return new DomainError('VALIDATION_FAILED', v.message, v.details);
}
