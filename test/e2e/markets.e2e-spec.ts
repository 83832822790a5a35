import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectError, http, startApp, type Running } from '../support/harness.js';

describe('public markets', () => {
  let svc: Running;
  beforeAll(async () => {
    svc = await startApp();
  });
  afterAll(async () => {
    await svc.close();
  });

  it('lists the seeded markets without a key, paginated by cursor', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const q: string = cursor === null ? '' : `&cursor=${cursor}`;
      const res = await http(`${svc.api}/markets?limit=10${q}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('svc-api-version')).toBe('v1');
      expect(res.body.data.length).toBeLessThanOrEqual(10);
      seen.push(...res.body.data.map((m: { id: string }) => m.id));
      cursor = res.body.next_cursor;
    } while (cursor !== null);
    expect(seen.length).toBeGreaterThanOrEqual(24);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('filters by category and status', async () => {
    const res = await http(`${svc.api}/markets?category=CRYPTO&status=OPEN&limit=200`);
    expect(res.status).toBe(200);
    expect(res.body.data.length).toBeGreaterThan(0);
    for (const m of res.body.data) {
      expect(m.category).toBe('CRYPTO');
      expect(m.status).toBe('OPEN');
    }
    const cats = new Set(
      (await http(`${svc.api}/markets?limit=200`)).body.data.map(
        (m: { category: string }) => m.category,
      ),
    );
    expect([...cats].sort()).toEqual(['CRYPTO', 'CULTURE', 'ECONOMICS', 'POLITICS', 'SPORTS']);
  });

  it('gets one market and answers 404 NOT_FOUND for an unknown or malformed id', async () => {
    // OPEN: a seeded past sports event's market comes first, RESOLVED.
    const list = await http(`${svc.api}/markets?limit=1&status=OPEN`);
    const id = list.body.data[0].id;
    const one = await http(`${svc.api}/markets/${id}`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id, status: 'OPEN', volume: 0 });
    for (const k of [
      'slug',
      'title',
      'category',
      'outcome',
      'close_time',
      'best_bid',
      'best_ask',
      'last_price',
    ]) {
      expect(one.body).toHaveProperty(k);
    }
    expectError(await http(`${svc.api}/markets/mkt_doesnotexist`), 404, 'NOT_FOUND');
    expectError(await http(`${svc.api}/markets/not-an-id`), 404, 'NOT_FOUND');
  });

  it('rejects bad query parameters with VALIDATION_FAILED naming each field', async () => {
    const err = expectError(
      await http(`${svc.api}/markets?limit=500&status=NOPE&category=x`),
      400,
      'VALIDATION_FAILED',
    );
    const fields = err.details.fields.map((f: { field: string }) => f.field).sort();
    expect(fields).toEqual(['category', 'limit', 'status']);
    expectError(await http(`${svc.api}/markets?cursor=garbage`), 400, 'VALIDATION_FAILED');
    // A cursor of the right length but forged keys (wrong types, not a time, not an id) is
    // refused too, rather than restarting or ending the listing.
    const forge = (keys: unknown[]) =>
      Buffer.from(JSON.stringify(['markets', ...keys])).toString('base64url');
    for (const keys of [
      [123, 'x'],
      ['2027-01-03T17:00:00.000Z', 5],
      ['not-a-date', 'mkt_x'],
      ['2027-01-03T17:00:00.000Z', 'x'],
    ]) {
      const e = expectError(
        await http(`${svc.api}/markets?cursor=${forge(keys)}`),
        400,
        'VALIDATION_FAILED',
      );
      expect(e.details.fields).toEqual([
        { field: 'cursor', message: 'cursor must be a cursor this API issued' },
      ]);
    }
    expect(
      (await http(`${svc.api}/markets?cursor=${forge(['2027-01-03T17:00:00.000Z', 'mkt_x'])}`))
        .status,
    ).toBe(200);
    // A cursor of another list, or of another market's trades, is refused by name.
    const other = Buffer.from(
      JSON.stringify(['transactions', '2027-01-03T17:00:00.000Z', 'mkt_x']),
    ).toString('base64url');
    expect(
      expectError(await http(`${svc.api}/markets?cursor=${other}`), 400, 'VALIDATION_FAILED')
        .details.fields,
    ).toEqual([
      {
        field: 'cursor',
        message:
          'cursor must come from this list (a cursor of another list: use the next_cursor this list returned)',
      },
    ]);
    // Integers are plain decimal: hex, padding, exponents and fractions are refused, not read.
    for (const q of ['limit=0x10', 'limit=%20%201', 'limit=1e1', 'limit=2.0', 'limit=abc']) {
      const e = expectError(await http(`${svc.api}/markets?${q}`), 400, 'VALIDATION_FAILED');
      // What is wrong is the type, not the range.
      expect(e.details.fields).toEqual([
        { field: 'limit', message: 'limit must be an integer number' },
      ]);
    }
    // An empty value is neither absent nor a number (issue 21: the document says minLength 1).
    expect(
      expectError(await http(`${svc.api}/markets?limit=`), 400, 'VALIDATION_FAILED').details.fields,
    ).toEqual([{ field: 'limit', message: 'limit must not be empty' }]);
    // A number out of range is told its range.
    expect(
      expectError(await http(`${svc.api}/markets?limit=500`), 400, 'VALIDATION_FAILED').details
        .fields,
    ).toEqual([{ field: 'limit', message: 'limit must not be greater than 200' }]);
    const id = (await http(`${svc.api}/markets?limit=1`)).body.data[0].id as string;
    expectError(
      await http(`${svc.api}/markets/${id}/orderbook?depth=0x5`),
      400,
      'VALIDATION_FAILED',
    );
    expect((await http(`${svc.api}/markets?limit=16`)).body.data).toHaveLength(16);
    expect((await http(`${svc.api}/markets/${id}/orderbook?depth=5`)).status).toBe(200);
  });
});
