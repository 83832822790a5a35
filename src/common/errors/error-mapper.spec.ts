import { describe, expect, it } from '@jest/globals';
import {
  BadRequestException,
  ForbiddenException,
  HttpException,
  NotFoundException,
} from '@nestjs/common';
import fc from 'fast-check';
import { DomainError } from './domain-error.js';
import { ERROR_CODES } from './error-codes.js';
import { mapError } from './error-mapper.js';

const RID = 'req_test_0000000001';

function fastifyError(code: string, statusCode: number, message = 'x'): Error {
  return Object.assign(new Error(message), { code, statusCode });
}

describe('mapError', () => {
  it('passes a DomainError through with its code, status, details and headers', () => {
    const err = new DomainError(
      'RATE_LIMITED',
      'Slow down',
      { limit_scope: 'key' },
      { 'Retry-After': '7' },
    );
    expect(mapError(err, RID)).toEqual({
      status: 429,
      body: {
        error: {
          code: 'RATE_LIMITED',
          message: 'Slow down',
          status: 429,
          request_id: RID,
          details: { limit_scope: 'key' },
        },
      },
      headers: { 'Retry-After': '7' },
      unexpected: false,
    });
  });

  it("maps Nest's HTTP exceptions to the generic code of their status", () => {
    expect(mapError(new NotFoundException('Cannot GET /x'), RID).body.error).toMatchObject({
      code: 'NOT_FOUND',
      status: 404,
      message: 'No such route',
    });
    expect(mapError(new ForbiddenException(), RID).body.error).toMatchObject({
      code: 'FORBIDDEN',
      status: 403,
    });
    expect(mapError(new BadRequestException('bad'), RID).body.error.code).toBe('BAD_REQUEST');
  });

  it.each([
    ['FST_ERR_CTP_BODY_TOO_LARGE', 413, 'PAYLOAD_TOO_LARGE', 413],
    ['FST_ERR_CTP_INVALID_MEDIA_TYPE', 415, 'UNSUPPORTED_MEDIA_TYPE', 415],
    ['FST_ERR_CTP_EMPTY_JSON_BODY', 400, 'MALFORMED_JSON', 400],
    ['FST_ERR_CTP_INVALID_JSON_BODY', 400, 'MALFORMED_JSON', 400],
    ['FST_ERR_CTP_INVALID_TYPE', 415, 'UNSUPPORTED_MEDIA_TYPE', 415],
    ['FST_ERR_BAD_URL', 400, 'BAD_REQUEST', 400],
    ['FST_ERR_MAX_PARAM_LENGTH', 414, 'NOT_FOUND', 404],
    ['HPE_HEADER_OVERFLOW', 431, 'HEADERS_TOO_LARGE', 431],
  ])('maps %s to %s', (fstCode, fstStatus, code, status) => {
    const mapped = mapError(fastifyError(fstCode, fstStatus, `'/x/%E0' internals`), RID);
    expect(mapped.status).toBe(status);
    expect(mapped.body.error).toMatchObject({ code, status, request_id: RID, details: {} });
    expect(mapped.body.error.message).not.toContain('internals');
    expect(mapped.unexpected).toBe(false);
  });

  it("maps Fastify's JSON SyntaxError to MALFORMED_JSON", () => {
    const err = Object.assign(new SyntaxError('Unexpected token } in JSON at position 3'), {
      statusCode: 400,
    });
    expect(mapError(err, RID).body.error).toMatchObject({ code: 'MALFORMED_JSON', status: 400 });
  });

  it('turns anything unexpected into 500 INTERNAL with nothing of it in the body', () => {
    const secret = 'SQLITE_ERROR: no such table: markets';
    const err = new Error(secret);
    err.stack = `Error: ${secret}\n    at Database.prepare (/app/node_modules/better-sqlite3/lib/x.js:1:1)`;
    for (const thrown of [
      err,
      Object.assign(err, { statusCode: 500 }),
      secret,
      null,
      undefined,
      42,
    ]) {
      const mapped = mapError(thrown, RID);
      expect(mapped.status).toBe(500);
      expect(mapped.unexpected).toBe(true);
      expect(mapped.headers).toEqual({});
      expect(mapped.body).toEqual({
        error: {
          code: 'INTERNAL',
          message: expect.any(String),
          status: 500,
          request_id: RID,
          details: {},
        },
      });
      const text = JSON.stringify(mapped.body);
      for (const leak of ['SQLITE', 'markets', 'at ', 'node_modules', 'stack']) {
        expect(text).not.toContain(leak);
      }
    }
  });

  it('is not fooled by error codes that name Object.prototype members', () => {
    for (const code of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      expect(mapError({ code, statusCode: 500 }, RID).body.error.code).toBe('INTERNAL');
      expect(mapError({ code, statusCode: 418 }, RID).body.error.code).toBe('BAD_REQUEST');
    }
  });

  it('keeps a long or multi-line library message out of a 4xx body', () => {
    const multi = Object.assign(new Error('line one\n    at something (file.js:1:1)'), {
      statusCode: 400,
    });
    expect(mapError(multi, RID).body.error.message).toBe('Request failed with status 400');
    const long = Object.assign(new Error('y'.repeat(500)), { statusCode: 404 });
    expect(mapError(long, RID).body.error.message).toBe('Request failed with status 404');
  });

  it('whatever is thrown, the body is the contract shape and the code matches its registry status', () => {
    const thrown = fc.oneof(
      fc.anything(),
      fc.record({
        code: fc.oneof(fc.string(), fc.constantFrom('FST_ERR_BAD_URL', 'HPE_HEADER_OVERFLOW')),
        statusCode: fc.integer({ min: 100, max: 700 }),
        message: fc.string(),
      }),
      fc
        .tuple(fc.integer({ min: 400, max: 599 }), fc.string())
        .map(([s, m]) => new HttpException(m, s)),
      fc
        .tuple(
          fc.constantFrom(...(Object.keys(ERROR_CODES) as (keyof typeof ERROR_CODES)[])),
          fc.string(),
        )
        .map(([c, m]) => new DomainError(c, m)),
    );
    fc.assert(
      fc.property(thrown, (t) => {
        const { status, body } = mapError(t, RID);
        expect(Object.keys(body)).toEqual(['error']);
        expect(Object.keys(body.error).sort()).toEqual([
          'code',
          'details',
          'message',
          'request_id',
          'status',
        ]);
        expect(body.error.status).toBe(status);
        expect(body.error.request_id).toBe(RID);
        expect(ERROR_CODES[body.error.code as keyof typeof ERROR_CODES]).toBe(status);
        expect(body.error.message).not.toMatch(/\n/);
      }),
      { numRuns: 500 },
    );
  });
});
