import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ManualClock } from '../../src/common/clock/clock.js';
import { http, type Running } from '../support/harness.js';
import {
  as,
  market,
  ORDER_SCOPES,
  paperQuery,
  place,
  SEED_MARKETS,
  startOrdersApp,
  trader,
  type Trader,
} from '../support/orders.js';
import { ledger, walletOf } from '../support/wallet.js';

/**
 * Crypto markets with an index and a strike resolve by themselves at close_time from their
 * world's index (YES when strictly above the strike), through the engine's one resolution path,
 * exactly once, including after a restart that missed the moment (issue 19).
 */
const SCOPES = [...ORDER_SCOPES, 'crypto:read', 'wallet:write'];
const BTC = SEED_MARKETS.find((m) => m.slug === 'btc-above-150k-2027-06-30')!;
const ETH = SEED_MARKETS.find((m) => m.slug === 'eth-above-8k-2027-12-31')!;
const NBA = SEED_MARKETS.find((m) => m.slug === 'nba-finals-2027-celtics')!;
// No automatic steps: the index is what the sandbox set, so outcomes are exact.
const ENV = { CRYPTO_TICK_INTERVAL_MS: '0' };

function moveTo(svc: Running, iso: string): void {
  const clock = svc.clock as ManualClock;
  clock.advance(Date.parse(iso) - clock.now());
}

const setIndex = async (svc: Running, t: Trader, symbol: string, price: string) => {
  const res = await as(t, `${svc.api}/sandbox/crypto/${symbol}/price`, {
    method: 'POST',
    json: { price },
  });
  expect(res.status).toBe(200);
};

/** SETTLEMENT ledger rows of a market (every holder paid), or of one holder. */
const settlements = (svc: Running, marketId: string, userId?: string) =>
  paperQuery<{ n: number }>(
    svc,
    "SELECT COUNT(*) AS n FROM ledger WHERE type = 'SETTLEMENT' AND reference_id = ? AND user_id LIKE ?",
    marketId,
    userId ?? '%',
  )[0].n;

describe('crypto markets resolve at close_time from their index', () => {
  let svc: Running;
  let a: Trader;
  beforeAll(async () => {
    svc = await startOrdersApp({ env: ENV });
    a = await trader(svc, 'holder@crypto-markets.test', { scopes: SCOPES });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('show their index and strike; other markets show null', async () => {
    const btc = await as(a, `${svc.api}/markets/${BTC.id}`);
    expect(btc.body).toMatchObject({ index: 'BTC-USD', strike: '150000.00', status: 'OPEN' });
    expect((await as(a, `${svc.api}/markets/${ETH.id}`)).body).toMatchObject({
      index: 'ETH-USD',
      strike: '8000.00',
    });
    expect((await http(`${svc.api}/markets/${NBA.id}`)).body).toMatchObject({
      index: null,
      strike: null,
    });
  });

  it('resolves YES above the strike at close_time, pays the holders once, and the live market from the live index', async () => {
    await place(svc, a, market(BTC, 'BUY', 'YES', 10));
    const before = (await walletOf(svc, a)).balance_cents;
    await setIndex(svc, a, 'BTC-USD', '150000.01');
    // A second before close_time: still open, nothing paid.
    moveTo(svc, '2027-06-30T23:59:58.000Z');
    await as(a, `${svc.api}/crypto/prices`);
    expect((await as(a, `${svc.api}/markets/${BTC.id}`)).body.status).toBe('OPEN');
    // At close_time the timer (about once a second) resolves it with no request arriving.
    moveTo(svc, '2027-06-30T23:59:59.000Z');
    const deadline = Date.now() + 5000;
    while (
      paperQuery<{ status: string }>(svc, 'SELECT status FROM markets WHERE id = ?', BTC.id)[0]
        .status !== 'RESOLVED'
    ) {
      if (Date.now() > deadline) throw new Error('not resolved by the timer');
      await new Promise((r) => setTimeout(r, 100));
    }
    const paper = await as(a, `${svc.api}/markets/${BTC.id}`);
    expect(paper.body).toMatchObject({ status: 'RESOLVED', outcome: 'YES' });
    expect((await walletOf(svc, a)).balance_cents).toBe(before + 1_000);
    const [row] = await ledger(svc, a, { type: 'SETTLEMENT' });
    expect(row).toMatchObject({ type: 'SETTLEMENT', amount_cents: 1_000, reference_id: BTC.id });
    // The live market resolved from the live index (95000.00, untouched by the paper move): NO.
    expect((await http(`${svc.api}/markets/${BTC.id}`)).body).toMatchObject({
      status: 'RESOLVED',
      outcome: 'NO',
      environment: 'live',
    });
    // Exactly once: later catch-ups, reads and a sandbox resolve change nothing.
    moveTo(svc, '2027-07-02T00:00:00.000Z');
    await as(a, `${svc.api}/crypto/prices`);
    await new Promise((r) => setTimeout(r, 1200));
    expect(settlements(svc, BTC.id)).toBe(1);
    const again = await as(a, `${svc.api}/sandbox/markets/${BTC.id}/resolve`, {
      method: 'POST',
      json: { outcome: 'NO' },
    });
    expect(again.status).toBe(409);
    expect((await walletOf(svc, a)).balance_cents).toBe(before + 1_000);
  });

  it('resolves NO at or below the strike: YES holders get nothing', async () => {
    await place(svc, a, market(ETH, 'BUY', 'YES', 5));
    const before = (await walletOf(svc, a)).balance_cents;
    await setIndex(svc, a, 'ETH-USD', '8000.00'); // equal is not above
    moveTo(svc, '2028-01-01T00:00:00.000Z');
    await as(a, `${svc.api}/crypto/prices`);
    expect((await as(a, `${svc.api}/markets/${ETH.id}`)).body).toMatchObject({
      status: 'RESOLVED',
      outcome: 'NO',
    });
    expect((await walletOf(svc, a)).balance_cents).toBe(before);
    expect(settlements(svc, ETH.id, a.userId)).toBe(0);
    expect(
      paperQuery<{ n: number }>(
        svc,
        'SELECT COUNT(*) AS n FROM positions WHERE market_id = ? AND (yes_qty > 0 OR no_qty > 0)',
        ETH.id,
      )[0].n,
    ).toBe(0);
  });
});

describe('crypto markets across a restart that missed close_time', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-crypto-restart-'));
  let svc: Running | undefined;
  afterAll(async () => {
    await svc?.close({ keepData: true });
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('resolves at boot from the price recorded before close_time, once, and never again', async () => {
    svc = await startOrdersApp({ env: ENV, dataDir });
    const a = await trader(svc, 'restart@crypto-markets.test', { scopes: SCOPES });
    await place(svc, a, market(BTC, 'BUY', 'YES', 7));
    const before = (await walletOf(svc, a)).balance_cents;
    await setIndex(svc, a, 'BTC-USD', '180000.00');
    await svc.close({ keepData: true });
    svc = undefined;

    // Down over close_time: the next start resolves it during boot, before any request.
    svc = await startOrdersApp({ env: ENV, dataDir, now: '2027-07-03T08:00:00.000Z' });
    const [row] = paperQuery<{ status: string; outcome: string }>(
      svc,
      'SELECT status, outcome FROM markets WHERE id = ?',
      BTC.id,
    );
    expect(row).toEqual({ status: 'RESOLVED', outcome: 'YES' });
    expect(settlements(svc, BTC.id)).toBe(1);
    expect((await walletOf(svc, a)).balance_cents).toBe(before + 700);
    await svc.close({ keepData: true });
    svc = undefined;

    // Another restart, later still: nothing is settled twice.
    svc = await startOrdersApp({ env: ENV, dataDir, now: '2027-08-01T00:00:00.000Z' });
    expect(settlements(svc, BTC.id)).toBe(1);
    expect((await walletOf(svc, a)).balance_cents).toBe(before + 700);
    expect((await as(a, `${svc.api}/markets/${BTC.id}`)).body).toMatchObject({
      status: 'RESOLVED',
      outcome: 'YES',
      index: 'BTC-USD',
      strike: '150000.00',
    });
  });
});
