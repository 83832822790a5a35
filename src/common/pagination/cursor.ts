import { DomainError } from '../errors/domain-error.js';

/** Opaque keyset cursors: base64url of a small JSON array of the last row's sort keys. */
export function encodeCursor(keys: (string | number)[]): string {
  return Buffer.from(JSON.stringify(keys), 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string, arity: number): (string | number)[] {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      Array.isArray(parsed) &&
      parsed.length === arity &&
      parsed.every((k) => typeof k === 'string' || typeof k === 'number')
    ) {
      return parsed as (string | number)[];
    }
  } catch {
    // fall through to the validation error
  }
  throw new DomainError(
    'VALIDATION_FAILED',
    'Invalid request: cursor: not a cursor this API issued',
    {
      fields: [{ field: 'cursor', message: 'not a cursor this API issued' }],
    },
  );
}

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}
