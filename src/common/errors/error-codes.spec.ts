import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { ERROR_CODES, statusOf, type ErrorCode } from './error-codes.js';

/** Codes and statuses fixed by CONTRACT.md and SPEC.md: they may never drift. */
const CONTRACT: Record<string, number> = {
  VALIDATION_FAILED: 400,
  MALFORMED_JSON: 400,
  CREATOR_ROLE_REQUIRED: 403,
  SLUG_TAKEN: 409,
  MARKET_LIMIT_REACHED: 422,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  SUNSET: 410,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  INTERNAL: 500,
  UNAUTHENTICATED: 401,
  API_KEY_REVOKED: 401,
  API_KEY_EXPIRED: 401,
  SIGNATURE_REQUIRED: 401,
  SIGNATURE_INVALID: 401,
  SIGNATURE_TIMESTAMP_SKEW: 401,
  SIGNATURE_REPLAYED: 401,
  INSUFFICIENT_SCOPE: 403,
  TEST_KEY_LIVE_ENDPOINT: 403,
  SANDBOX_DISABLED: 403,
  LIVE_KEY_SANDBOX_ENDPOINT: 403,
  CORS_ORIGIN_REJECTED: 403,
  LIVE_KEY_EXPLORER: 403,
  WRITE_SCOPES_NOT_ACKNOWLEDGED: 422,
  EMAIL_NOT_VERIFIED: 403,
  ADMIN_SCOPE_FORBIDDEN: 403,
  TERMS_ACCEPTANCE_REQUIRED: 403,
  MFA_STEP_UP_REQUIRED: 403,
  RFQ_RESPONDER_NOT_APPROVED: 403,
  RATE_LIMITED: 429,
  QUOTA_EXCEEDED: 429,
  WEBHOOK_NOT_SUSPENDED: 409,
  WEBHOOK_ENDPOINT_CAP_REACHED: 422,
  IDEMPOTENCY_KEY_REUSED: 422,
  IDEMPOTENCY_KEY_IN_USE: 409,
  INSUFFICIENT_FUNDS: 422,
  MARKET_NOT_OPEN: 422,
  POST_ONLY_WOULD_CROSS: 422,
  ORDER_NOT_OPEN: 409,
  USERNAME_TAKEN: 409,
  NOT_COMMENT_AUTHOR: 403,
  COMMENT_EDIT_WINDOW_CLOSED: 409,
  COMMENT_DELETED: 409,
  COMMENT_THREAD_TOO_DEEP: 422,
  ALREADY_REPORTED: 409,
  WATCHLIST_NAME_TAKEN: 409,
  WATCHLIST_LIMIT_REACHED: 422,
};

describe('error code registry', () => {
  it('holds every code of CONTRACT.md and SPEC.md with its fixed status', () => {
    for (const [code, status] of Object.entries(CONTRACT)) {
      expect([code, (ERROR_CODES as Record<string, number>)[code]]).toEqual([code, status]);
      expect(statusOf(code as ErrorCode)).toBe(status);
    }
  });

  it('has UPPER_SNAKE codes mapped to error statuses', () => {
    for (const [code, status] of Object.entries(ERROR_CODES)) {
      expect(code).toMatch(/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/);
      expect([code, Number.isInteger(status) && status >= 400 && status <= 599]).toEqual([
        code,
        true,
      ]);
    }
  });

  it('declares each code exactly once in the source (no silently shadowed duplicates)', () => {
    const source = readFileSync(new URL('./error-codes.ts', import.meta.url), 'utf8');
    const block = source.slice(source.indexOf('ERROR_CODES = {'), source.indexOf('} as const'));
    const keys = [...block.matchAll(/^\s+([A-Z][A-Z0-9_]*):\s*\d{3},/gm)].map((m) => m[1]);
    expect(keys.length).toBe(Object.keys(ERROR_CODES).length);
    const dupes = keys.filter((k, i) => keys.indexOf(k) !== i);
    expect(dupes).toEqual([]);
  });
});
