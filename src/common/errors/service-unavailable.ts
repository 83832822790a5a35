import { DomainError } from './domain-error.js';

/**
 * The 503 SERVICE_UNAVAILABLE answer (shutting down, or a sandbox UNAVAILABLE scenario), with
 * the Retry-After the client should honour.
 */
export function serviceUnavailable(message: string, retryAfterSeconds = 1): DomainError {
  return new DomainError(
    'SERVICE_UNAVAILABLE',
    message,
    {},
    { 'Retry-After': String(retryAfterSeconds) },
  );
}
