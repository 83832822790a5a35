import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectContractError, http, type Running } from '../support/harness.js';
import {
  as,
  expectValidation,
  keyFor,
  ORDER_SCOPES,
  STARTING_BALANCE,
  startOrdersApp,
  trader,
  type Trader,
} from '../support/orders.js';
import {
  expectLedgerConsistent,
  fund as fundWallet,
  ledger,
  walletOf,
  type Txn,
} from '../support/wallet.js';

const DEPRECATION = '@1778198400'; // 2026-05-08T00:00:00Z

describe('GET /transactions/cursor and the deprecated GET /wallet/transactions', () => {
  let svc: Running;
  let t: Trader;

  const fund = (amount: number): Promise<Txn> => fundWallet(svc, t, amount);

  beforeAll(async () => {
    svc = await startOrdersApp();
    t = await trader(svc, 'ledger@wallet.test', { scopes: [...ORDER_SCOPES, 'wallet:write'] });
    for (let i = 1; i <= 12; i++) await fund(100 + i);
  });
  afterAll(async () => {
    await svc.close();
  });

  it('lists the ledger newest first and it sums to the balance', async () => {
    const rows = await ledger(svc, t);
    expect(rows).toHaveLength(13);
    expect(rows.map((r) => r.amount_cents)).toEqual([
      112,
      111,
      110,
      109,
      108,
      107,
      106,
      105,
      104,
      103,
      102,
      101,
      STARTING_BALANCE,
    ]);
    expect(new Set(rows.map((r) => r.type))).toEqual(new Set(['FUNDING']));
    const ids = rows.map((r) => r.id);
    expect([...ids].sort().reverse()).toEqual(ids);
    expectLedgerConsistent(rows, (await walletOf(svc, t)).balance_cents);
  });

  it('keyset paging is stable under concurrent inserts: no duplicate, no gap', async () => {
    const before = await ledger(svc, t);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    let inserted = 0;
    do {
      const q: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
      const res = await as(t, `${svc.api}/transactions/cursor?limit=4${q}`);
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(4);
      seen.push(...res.body.data.map((r: Txn) => r.id));
      cursor = res.body.next_cursor;
      pages++;
      // New ledger rows land between pages (and twice on some pages).
      await fund(1_000 + pages);
      if (pages % 2 === 0) await fund(2_000 + pages);
      inserted += pages % 2 === 0 ? 2 : 1;
    } while (cursor !== null);
    expect(pages).toBe(4);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(before.map((r) => r.id));
    // The new rows are all there, on top, for a fresh walk.
    const after = await ledger(svc, t);
    expect(after).toHaveLength(before.length + inserted);
    expect(after.slice(inserted)).toEqual(before);
  });

  it('filters by type', async () => {
    const funding = await ledger(svc, t, { type: 'FUNDING' });
    expect(funding.length).toBeGreaterThan(13);
    expect(await ledger(svc, t, { type: 'TRADE' })).toEqual([]);
    const page = await as(t, `${svc.api}/transactions/cursor?type=FUNDING&limit=2`);
    expect(page.body.data).toHaveLength(2);
    expect(page.body.next_cursor).toEqual(expect.any(String));
    const next = await as(
      t,
      `${svc.api}/transactions/cursor?type=FUNDING&limit=2&cursor=${page.body.next_cursor}`,
    );
    expect(next.body.data.map((r: Txn) => r.id)).toEqual(funding.slice(2, 4).map((r) => r.id));
  });

  it('refuses bad paging and filters with 400 VALIDATION_FAILED naming the field', async () => {
    for (const [q, field] of [
      ['limit=0', 'limit'],
      ['limit=201', 'limit'],
      ['limit=1.5', 'limit'],
      ['limit=abc', 'limit'],
      ['type=BONUS', 'type'],
      ['cursor=garbage', 'cursor'],
    ]) {
      expectValidation(await as(t, `${svc.api}/transactions/cursor?${q}`), field);
      expectValidation(await as(t, `${svc.api}/wallet/transactions?${q}`), field);
    }
  });

  it('needs a credential with wallet:read', async () => {
    expectContractError(await http(`${svc.api}/transactions/cursor`), 401, 'UNAUTHENTICATED');
    expectContractError(await http(`${svc.api}/wallet`), 401, 'UNAUTHENTICATED');
    const noWallet = await keyFor(svc, t.email, t.token, { scopes: ['orders:read'] });
    for (const path of ['/wallet', '/transactions/cursor', '/wallet/transactions']) {
      const err = expectContractError(
        await as(noWallet, `${svc.api}${path}`),
        403,
        'INSUFFICIENT_SCOPE',
      );
      expect(err.details.required_scopes).toEqual(['wallet:read']);
    }
  });

  it('GET /wallet/transactions answers the same data with the deprecation headers and no Sunset', async () => {
    const legacy = await as(t, `${svc.api}/wallet/transactions?limit=5`);
    const current = await as(t, `${svc.api}/transactions/cursor?limit=5`);
    expect(legacy.status).toBe(200);
    expect(legacy.body).toEqual(current.body);
    expect(legacy.headers.get('deprecation')).toBe(DEPRECATION);
    expect(legacy.headers.get('sunset')).toBeNull();
    expect(legacy.headers.get('link')).toBe(
      '</api/v1/transactions/cursor>; rel="successor-version"',
    );
    // Its cursor pages the same way.
    const page2 = await as(
      t,
      `${svc.api}/wallet/transactions?limit=5&cursor=${legacy.body.next_cursor}`,
    );
    expect(page2.body.data[0].id < legacy.body.data[4].id).toBe(true);
    // Error answers of a deprecated operation carry the headers too.
    const bad = await as(t, `${svc.api}/wallet/transactions?limit=0`);
    expect(bad.status).toBe(400);
    expect(bad.headers.get('deprecation')).toBe(DEPRECATION);
    // The successor is not deprecated.
    expect(current.headers.get('deprecation')).toBeNull();
    expect(current.headers.get('link')).toBeNull();
  });

  it('the OpenAPI document marks GET /wallet/transactions deprecated, the successor not', async () => {
    const doc = (await http(`${svc.api}/openapi.json`)).body;
    const legacy = doc.paths['/api/v1/wallet/transactions'].get;
    expect(legacy).toMatchObject({
      deprecated: true,
      tags: ['Wallet'],
      'x-lifecycle': 'DEPRECATED',
      'x-required-scopes': ['wallet:read'],
      'x-deprecation': {
        deprecated_on: '2026-05-08',
        sunset_on: null,
        successor: '/api/v1/transactions/cursor',
      },
    });
    expect(legacy.responses['410']).toBeUndefined();
    const current = doc.paths['/api/v1/transactions/cursor'].get;
    expect(current.deprecated).toBeUndefined();
    expect(current['x-lifecycle']).toBe('STABLE');
    expect(doc.paths['/api/v1/wallet'].get['x-required-scopes']).toEqual(['wallet:read']);
  });
});
