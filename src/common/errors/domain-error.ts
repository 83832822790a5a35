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

export function validationFailed(fields: FieldError[]): DomainError {
  return new DomainError(
    'VALIDATION_FAILED',
    fields.length === 1
      ? `Invalid request: ${fields[0].field}: ${fields[0].message}`
      : `Invalid request: ${fields.length} fields failed validation`,
    { fields },
  );
}
