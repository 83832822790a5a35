import { validationFailed } from '../errors/domain-error.js';

/**
 * Opaque keyset cursors: base64url of a small JSON array, the list it belongs to
 * (`orders:<environment>`, `trades:<environment>:<market>`, ...) then the last row's sort keys. The list name keeps a cursor to the list
 * that issued it: one from another list (or another market's trades) is refused, not read as a
 * position in this one.
 */
export function encodeCursor(list: string, keys: (string | number)[]): string {
  return Buffer.from(JSON.stringify([list, ...keys]), 'utf8').toString('base64url');
}

/**
 * What a cursor key may be: a prefixed id (`ord_...`, `mkt_...`), an ISO timestamp, or a safe
 * integer written in decimal (a score such as realized P&L cents; the caller converts it back).
 */
export type CursorKey = 'id' | 'time' | 'int';

const KEY_SHAPE: Record<CursorKey, RegExp> = {
  id: /^[a-z]{2,8}_[0-9A-Za-z]{1,64}$/,
  time: /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/,
  int: /^(0|-?[1-9]\d{0,15})$/,
};

/**
 * The keys of a cursor this API issued for `list`, one per entry of `kinds`; anything else (a
 * cursor of another list, another shape, another type, a forged value) is 400 VALIDATION_FAILED
 * rather than a page that silently restarts, ends or starts somewhere else. A cursor issued under
 * one of `formerNames` (names this list had before, whose cursors mean the same position here) is
 * accepted as this list's.
 */
export function decodeCursor(
  cursor: string,
  list: string,
  kinds: readonly CursorKey[],
  formerNames: readonly string[] = [],
): string[] {
  let problem = 'cursor must be a cursor this API issued';
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    // Another list's cursor is named as such whatever its keys (a markets cursor holds two).
    const named = Array.isArray(parsed) && (parsed[0] === list || formerNames.includes(parsed[0]));
    if (Array.isArray(parsed) && isListName(parsed[0]) && !named) {
      problem =
        'cursor must come from this list (a cursor of another list: use the next_cursor this list returned)';
    } else if (Array.isArray(parsed) && parsed.length === kinds.length + 1) {
      const keys = parsed.slice(1);
      if (
        keys.every((k, i) => typeof k === 'string' && KEY_SHAPE[kinds[i]].test(k)) &&
        // A time must be one the API wrote (toISOString's spelling of a real instant): no
        // 2026-02-30 read as March 2nd.
        kinds.every((k, i) => k !== 'time' || isIsoInstant(keys[i] as string)) &&
        kinds.every((k, i) => k !== 'int' || Number.isSafeInteger(Number(keys[i])))
      ) {
        if (named) return keys as string[];
      }
    }
  } catch {
    // fall through to the validation error
  }
  throw validationFailed([{ field: 'cursor', message: problem }]);
}

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

function isIsoInstant(value: string): boolean {
  const ms = Date.parse(value);
  return !Number.isNaN(ms) && new Date(ms).toISOString() === value;
}

/** What encodeCursor writes first: a list name such as `orders:test` or `trades:live:mkt_1`. */
function isListName(value: unknown): boolean {
  return typeof value === 'string' && /^[a-z][a-z-]*(?::[A-Za-z0-9_-]+)*$/.test(value);
}
