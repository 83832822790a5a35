import { describe, expect, it } from '@jest/globals';
import { MemoryLimitStore } from './limit-store.js';
import { dayWindow, ipCategoryOf, minuteWindow, monthWindow } from './limit-tables.js';
import { retryAfter } from './limits.service.js';

describe('per-IP path categories (CONTRACT.md Access details)', () => {
  it.each([
    ['/api/v1/auth/login', 'auth'],
    ['/api/v1/api-keys/key_1/rotate', 'auth'],
    ['/api/v1/security/mfa/step-up', 'auth'],
    ['/api/v1/developer-terms/accept', 'auth'],
    ['/api/v1/waitlist', 'waitlist'],
    ['/api/v1/app/config', 'app-shell'],
    ['/api/v1/openapi/v1.json', 'app-shell'],
    ['/api/v1/openapi.json', 'app-shell'],
    ['/api/v1/changelog.rss', 'app-shell'],
    ['/api/v1/wallet/withdrawals', 'wallet'],
    ['/api/v1/transactions/cursor', 'wallet'],
    ['/api/v1/positions/cursor?limit=5', 'wallet'],
    ['/api/v1/markets/mkt_1/comments', 'comments'],
    ['/api/v1/comments/c1', 'comments'],
    ['/api/v1/markets', 'markets'],
    ['/api/v1/markets/mkt_1/orderbook', 'markets'],
    ['/api/v1/sports/x', 'markets'],
    ['/api/v1/crypto', 'markets'],
    ['/api/v1/indices/x/history', 'markets'],
    ['/api/v1/rank/history/cursor', 'markets'],
    ['/api/v1/orders/batch', 'orders'],
    ['/api/v1/rfq/rfq_1/quotes', 'orders'],
    ['/api/v1/admin/tier-requests', 'admin'],
    ['/api/v1/referrals', 'referrals'],
    ['/api/v1/health', 'general'],
    ['/api/v1/authority', 'general'],
    ['/openapi.json', 'general'],
    ['/explorer', 'app-shell'],
    ['/explorer/', 'app-shell'],
    ['/explorer/ui/swagger-ui-bundle.js', 'app-shell'],
    ['/explorer/*', 'app-shell'],
    ['/app', 'app-shell'],
    ['/app/markets/mkt_1?tab=book', 'app-shell'],
    ['/app/*', 'app-shell'],
    ['/apple', 'general'],
    ['/explorers', 'general'],
  ])('%s -> %s', (path, category) => {
    expect(ipCategoryOf(path)).toBe(category);
  });
});

describe('calendar windows (UTC)', () => {
  const t = Date.parse('2026-12-31T23:59:30.500Z');
  it('minute, day and month windows contain the instant', () => {
    expect(minuteWindow(t).map((x) => new Date(x).toISOString())).toEqual([
      '2026-12-31T23:59:00.000Z',
      '2027-01-01T00:00:00.000Z',
    ]);
    expect(dayWindow(t).map((x) => new Date(x).toISOString())).toEqual([
      '2026-12-31T00:00:00.000Z',
      '2027-01-01T00:00:00.000Z',
    ]);
    expect(monthWindow(t).map((x) => new Date(x).toISOString())).toEqual([
      '2026-12-01T00:00:00.000Z',
      '2027-01-01T00:00:00.000Z',
    ]);
    expect(
      monthWindow(Date.parse('2027-02-10T00:00:00Z')).map((x) => new Date(x).toISOString()),
    ).toEqual(['2027-02-01T00:00:00.000Z', '2027-03-01T00:00:00.000Z']);
  });

  it('Retry-After is whole seconds, rounded up, at least 1', () => {
    expect(retryAfter(10_000, 0)).toBe(10);
    expect(retryAfter(10_000, 9_001)).toBe(1);
    expect(retryAfter(10_000, 9_999)).toBe(1);
    expect(retryAfter(10_000, 1)).toBe(10);
  });
});

describe('MemoryLimitStore', () => {
  it('charges several buckets all or nothing', () => {
    const s = new MemoryLimitStore();
    const a = { bucket: 'a', units: 1, limit: 2, windowEnd: 1000 };
    const b = { bucket: 'b', units: 1, limit: 1, windowEnd: 1000 };
    expect(s.take([a, b], 0)).toEqual({ ok: true, counts: [1, 1] });
    expect(s.take([a, b], 1)).toEqual({ ok: false, index: 1, count: 1 });
    expect(s.count('a', 2)).toBe(1); // the refused take charged nothing
    expect(s.take([a], 3)).toEqual({ ok: true, counts: [2] });
  });

  it('charges N units at once or none (batch legs)', () => {
    const s = new MemoryLimitStore();
    const legs = (n: number) => [{ bucket: 'ip', units: n, limit: 120, windowEnd: 60_000 }];
    expect(s.take(legs(100), 0).ok).toBe(true);
    expect(s.take(legs(21), 1)).toEqual({ ok: false, index: 0, count: 100 });
    expect(s.take(legs(20), 2)).toEqual({ ok: true, counts: [120] });
  });

  it('a window ends at its end: the counter starts again', () => {
    const s = new MemoryLimitStore();
    const c = { bucket: 'k', units: 1, limit: 1, windowEnd: 1000 };
    expect(s.take([c], 0).ok).toBe(true);
    expect(s.take([c], 999).ok).toBe(false);
    expect(s.take([{ ...c, windowEnd: 2000 }], 1000).ok).toBe(true);
  });
});
