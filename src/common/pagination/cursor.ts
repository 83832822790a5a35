import { DomainError } from '../errors/domain-error.js';

/** Opaque keyset cursors: base64url of a small JSON array of the last row's sort keys. */
export function encodeCursor(keys: (string | number)[]): string {
  return Buffer.from(JSON.stringify(keys), 'utf8').toString('base64url');
}

/** What a cursor key may be: a prefixed id (`ord_...`, `mkt_...`) or an ISO timestamp. */
export type CursorKey = 'id' | 'time';

const KEY_SHAPE: Record<CursorKey, RegExp> = {
  id: /^[a-z]{2,8}_[0-9A-Za-z]{1,64}$/,
  time: /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/,
};

/**
 * The keys of a cursor this API issued, one per entry of `kinds`; anything else (another shape,
 * another type, a forged value) is 400 VALIDATION_FAILED rather than a page that silently
 * restarts or ends.
 */
export function decodeCursor(cursor: string, kinds: readonly CursorKey[]): string[] {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      Array.isArray(parsed) &&
      parsed.length === kinds.length &&
      parsed.every((k, i) => typeof k === 'string' && KEY_SHAPE[kinds[i]].test(k)) &&
      kinds.every((k, i) => k !== 'time' || !Number.isNaN(Date.parse(parsed[i] as string)))
    ) {
      return parsed as string[];
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
