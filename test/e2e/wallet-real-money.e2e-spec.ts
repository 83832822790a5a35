import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AdjustableClock } from '../../src/common/clock/clock.js';
import { totpAt } from '../../src/common/crypto/totp.js';
import { verifiedAccount } from '../support/access.js';
import { expectContractError, http, type JsonResponse, type Running } from '../support/harness.js';
import {
  as,
  expectValidation,
  keyFor,
  limit,
  place,
  STARTING_BALANCE,
  startOrdersApp,
  TRADABLE,
  type Trader,
} from '../support/orders.js';
import { ledger, walletOf } from '../support/wallet.js';
import { openDatabaseOf } from '../support/test-database.js';

/**
 * Real-money wallet operations (CONTRACT.md, Positions, wallet, sandbox controls; SPEC.md,
 * Withdrawals): live keys only, withdrawals behind a step-up of at most 300 s, never more than
 * the available balance, and a refusal changes nothing.
 */
describe('POST /wallet/deposits and POST /wallet/withdrawals', () => {
  let svc: Running;
  let token: string;
  let live: Trader;
  let paper: Trader;
  let paperScoped: Trader;
  const email = 'money@wallet.test';
  const m = TRADABLE[1];

  const post = (t: Pick<Trader, 'key'>, what: 'deposits' | 'withdrawals', json: unknown) =>
    as(t, `${svc.api}/wallet/${what}`, { method: 'POST', json });
  const session = (path: string, json?: unknown) =>
    http(`${svc.api}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      json,
    });
  const stepUp = async (secret: string): Promise<void> => {
    const code = totpAt(secret, Math.floor(svc.clock.nowSeconds() / 30));
    const res = await session('/security/mfa/step-up', { code });
    if (res.status !== 200) throw new Error(`step-up: ${res.status} ${res.text}`);
  };
  /** The live wallet and ledger, to show that a refusal changed nothing. */
  const snapshot = async () => ({
    wallet: await walletOf(svc, live),
    ledger: await ledger(svc, live),
    paper: await walletOf(svc, paper),
  });

  beforeAll(async () => {
    svc = await startOrdersApp();
    token = await verifiedAccount(svc, email);
    const scopes = ['wallet:read', 'wallet:write', 'orders:read', 'orders:write'];
    live = await keyFor(svc, email, token, { environment: 'live', scopes });
    paper = await keyFor(svc, email, token, { environment: 'test', scopes });
    paperScoped = await keyFor(svc, email, token, {
      environment: 'live',
      scopes: [...scopes, 'env:paper'],
    });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('a test key and a live key with env:paper get 403 TEST_KEY_LIVE_ENDPOINT; nothing changes', async () => {
    const before = await snapshot();
    for (const k of [paper, paperScoped]) {
      for (const what of ['deposits', 'withdrawals'] as const) {
        expectContractError(
          await post(k, what, { amount_cents: 1_000 }),
          403,
          'TEST_KEY_LIVE_ENDPOINT',
        );
      }
    }
    expect(await snapshot()).toEqual(before);
    expect(before.paper.balance_cents).toBe(STARTING_BALANCE);
  });

  it('a live key deposits: a DEPOSIT row and the new wallet, in the live engine only', async () => {
    const res = await post(live, 'deposits', { amount_cents: 50_000 });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      transaction: {
        id: expect.stringMatching(/^txn_/),
        type: 'DEPOSIT',
        amount_cents: 50_000,
        balance_after_cents: 50_000,
        reference_id: res.headers.get('x-request-id'),
        created_at: svc.clock.nowDate().toISOString(),
      },
      wallet: {
        environment: 'live',
        currency: 'USD',
        balance_cents: 50_000,
        reserved_cents: 0,
        available_cents: 50_000,
      },
    });
    expect((await walletOf(svc, live)).balance_cents).toBe(50_000);
    expect(await ledger(svc, live)).toEqual([res.body.transaction]);
    expect((await walletOf(svc, paper)).balance_cents).toBe(STARTING_BALANCE);
  });

  it('bad amounts are 400 VALIDATION_FAILED naming amount_cents, and change nothing', async () => {
    const before = await snapshot();
    for (const amount of [0, -1, -500, 1.5, '100', null, true, 1_000_000_001, 1e21]) {
      for (const what of ['deposits', 'withdrawals'] as const) {
        expectValidation(await post(live, what, { amount_cents: amount }), 'amount_cents');
      }
    }
    expectValidation(await post(live, 'deposits', {}), 'amount_cents');
    expectValidation(await post(live, 'deposits', { amount_cents: 5, note: 'x' }), 'note');
    expectContractError(
      await as(live, `${svc.api}/wallet/deposits`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"amount_cents":',
      }),
      400,
      'MALFORMED_JSON',
    );
    expect(await snapshot()).toEqual(before);
  });

  it('a live key without wallet:write gets 403 INSUFFICIENT_SCOPE', async () => {
    const reader = await keyFor(svc, email, token, {
      environment: 'live',
      scopes: ['wallet:read'],
    });
    const err = expectContractError(
      await post(reader, 'deposits', { amount_cents: 5 }),
      403,
      'INSUFFICIENT_SCOPE',
    );
    expect(err.details.required_scopes).toEqual(['wallet:write']);
  });

  it('a withdrawal without a step-up is 403 MFA_STEP_UP_REQUIRED and changes nothing', async () => {
    const before = await snapshot();
    const err = expectContractError(
      await post(live, 'withdrawals', { amount_cents: 1_000 }),
      403,
      'MFA_STEP_UP_REQUIRED',
    );
    expect(err.message).toContain('/security/mfa/step-up');
    expect(await snapshot()).toEqual(before);
  });

  it('after enrolment and a step-up it proceeds, up to the available balance, for 300 s', async () => {
    const en = await session('/security/mfa/enroll');
    expect(en.status).toBe(201);
    const secret = en.body.secret as string;
    // Enrolled but not stepped up: still refused. The refusal is not kept under its
    // Idempotency-Key, so the very same retry after the step-up runs (it was replayed, 24 h).
    const withdraw = () =>
      as(live, `${svc.api}/wallet/withdrawals`, {
        method: 'POST',
        headers: { 'idempotency-key': 'withdraw-after-step-up' },
        json: { amount_cents: 20_000 },
      });
    expectContractError(await withdraw(), 403, 'MFA_STEP_UP_REQUIRED');
    await stepUp(secret);

    const res = await withdraw();
    expect(res.status).toBe(201);
    expect(res.headers.get('idempotent-replayed')).toBeNull();
    // From now on the key holds this answer.
    const replayed = await withdraw();
    expect(replayed.status).toBe(201);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body).toEqual(res.body);
    expect(res.body.transaction).toMatchObject({
      type: 'WITHDRAWAL',
      amount_cents: -20_000,
      balance_after_cents: 30_000,
      reference_id: res.headers.get('x-request-id'),
    });
    expect(res.body.wallet).toMatchObject({ balance_cents: 30_000, available_cents: 30_000 });

    // A resting live bid reserves 40 x 100: 26,000 is available.
    const o = await place(svc, live, limit(m, 'BUY', 'YES', 40, 100));
    expect(o).toMatchObject({ environment: 'live', status: 'OPEN' });
    expect(await walletOf(svc, live)).toMatchObject({
      balance_cents: 30_000,
      reserved_cents: 4_000,
      available_cents: 26_000,
    });
    const before = await snapshot();
    const err = expectContractError(
      await post(live, 'withdrawals', { amount_cents: 26_001 }),
      422,
      'INSUFFICIENT_FUNDS',
    );
    expect(err.details).toEqual({ requested_cents: 26_001, available_cents: 26_000 });
    expect(await snapshot()).toEqual(before);

    // 300 s after the step-up it is still fresh at 299 s, and stale at 301 s.
    (svc.clock as AdjustableClock).advance(299_000);
    const ok = await post(live, 'withdrawals', { amount_cents: 1_000 });
    expect(ok.status).toBe(201);
    expect(ok.body.wallet.balance_cents).toBe(29_000);
    (svc.clock as AdjustableClock).advance(2_000);
    const stale = await snapshot();
    expectContractError(
      await post(live, 'withdrawals', { amount_cents: 1_000 }),
      403,
      'MFA_STEP_UP_REQUIRED',
    );
    expect(await snapshot()).toEqual(stale);

    // A new step-up opens a new window.
    await stepUp(secret);
    const again = await post(live, 'withdrawals', { amount_cents: 26_000 - 1_000 });
    expect(again.status).toBe(201);
    expect(again.body.wallet).toMatchObject({
      balance_cents: 4_000,
      reserved_cents: 4_000,
      available_cents: 0,
    });

    const rows = await ledger(svc, live);
    expect(rows.map((r) => [r.type, r.amount_cents])).toEqual([
      ['WITHDRAWAL', -25_000],
      ['WITHDRAWAL', -1_000],
      ['WITHDRAWAL', -20_000],
      ['DEPOSIT', 50_000],
    ]);
    expect(rows.reduce((s, r) => s + r.amount_cents, 0)).toBe(4_000);
  });

  it('a user with no live account yet cannot withdraw and gets no account either', async () => {
    const other = await verifiedAccount(svc, 'empty@wallet.test');
    const k = await keyFor(svc, 'empty@wallet.test', other, {
      environment: 'live',
      scopes: ['wallet:read', 'wallet:write'],
    });
    const en = await http(`${svc.api}/security/mfa/enroll`, {
      method: 'POST',
      headers: { authorization: `Bearer ${other}` },
    });
    const code = totpAt(en.body.secret as string, Math.floor(svc.clock.nowSeconds() / 30));
    const su: JsonResponse = await http(`${svc.api}/security/mfa/step-up`, {
      method: 'POST',
      headers: { authorization: `Bearer ${other}` },
      json: { code },
    });
    expect(su.status).toBe(200);
    const err = expectContractError(
      await post(k, 'withdrawals', { amount_cents: 1 }),
      422,
      'INSUFFICIENT_FUNDS',
    );
    expect(err.details).toEqual({ requested_cents: 1, available_cents: 0 });
    const me = await as(k, `${svc.api}/auth/me`);
    const db = openDatabaseOf(svc.dataDir, 'live', { readonly: true });
    try {
      const rows = db.prepare('SELECT * FROM accounts WHERE user_id = ?').all(me.body.user.id);
      expect(rows).toEqual([]);
    } finally {
      db.close();
    }
  });

  it('the OpenAPI document marks both as real-money operations needing wallet:write', async () => {
    const doc = (await http(`${svc.api}/openapi.json`)).body;
    for (const p of ['/api/v1/wallet/deposits', '/api/v1/wallet/withdrawals']) {
      const op = doc.paths[p].post;
      expect([p, op['x-environment'], op['x-required-scopes'], op.tags]).toEqual([
        p,
        'real-money',
        ['wallet:write'],
        ['Wallet'],
      ]);
      expect(op.requestBody).toBeDefined();
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['201', '400', '403']));
    }
  });
});
