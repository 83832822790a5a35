import { afterAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { verifiedAccount } from '../support/access.js';
import { failWrites } from '../support/fail-writes.js';
import { expectContractError } from '../support/harness.js';
import { as, keyFor, limit, TRADABLE, type Trader } from '../support/orders.js';
import { startService, type ServiceProcess } from '../support/process.js';
import { dropDatabaseOf, openDatabaseOf } from '../support/test-database.js';

/**
 * An Idempotency-Key never moves money or places orders twice, even across a crash (issue 3's
 * idempotency over issue 4's engine): the engine records a key's effect in its own commit, the
 * answer is stored in the platform database after it. Here the platform database refuses to
 * store the answers (a trigger: SQLite's, or in the PostgreSQL pass a trigger function on the
 * pass's database), the service is killed with SIGKILL, and the retries come after
 * the restart: applied requests answer 409 IDEMPOTENT_REQUEST_APPLIED naming what they did and
 * nothing runs twice; a request that never took effect runs normally.
 */
describe('idempotency across a crash between the engine commit and the stored answer', () => {
  const env = { SANDBOX_FEED_INTERVAL_MS: '0', RATE_LIMITS_ENABLED: 'false', LOG_LEVEL: 'warn' };
  let svc: ServiceProcess | undefined;
  afterAll(async () => {
    await svc?.stop('SIGKILL');
    if (svc !== undefined) {
      rmSync(svc.dataDir, { recursive: true, force: true });
      await dropDatabaseOf(svc.dataDir);
    }
  });

  // The process's databases, from outside it: its SQLite files, or in the PostgreSQL pass the
  // schemas of its database on the pass's PostgreSQL (test-database.ts).
  const platform = (dataDir: string, sql: string, ...params: unknown[]): void => {
    const db = openDatabaseOf(dataDir, 'platform');
    try {
      db.prepare(sql).run(...params);
    } finally {
      db.close();
    }
  };
  const engineRows = <T>(
    dataDir: string,
    name: 'live' | 'paper',
    sql: string,
    ...params: unknown[]
  ): T[] => {
    const db = openDatabaseOf(dataDir, name, { readonly: true });
    try {
      return db.prepare(sql).all(...params) as T[];
    } finally {
      db.close();
    }
  };

  it('a deposit and an order applied before the crash are not run again by their retries', async () => {
    svc = await startService({ env, testDatabase: true });
    const dataDir = svc.dataDir;
    const email = `idem-crash-${process.pid}@orders.test`;
    const token = await verifiedAccount(svc, email);
    const scopes = ['wallet:read', 'wallet:write', 'orders:read', 'orders:write'];
    const live: Trader = await keyFor(svc, email, token, { environment: 'live', scopes });
    const paper: Trader = await keyFor(svc, email, token, { environment: 'test', scopes });
    const m = TRADABLE[3];
    const depositBody = { amount_cents: 12_345 };
    const orderBody = limit(m, 'BUY', 'YES', m.reference - 10, 7, { client_order_id: 'idem-1' });
    const deposit = (key: string, body: unknown = depositBody) =>
      as(live, `${svc!.api}/wallet/deposits`, {
        method: 'POST',
        json: body,
        headers: { 'idempotency-key': key },
      });
    const order = () =>
      as(paper, `${svc!.api}/orders`, {
        method: 'POST',
        json: orderBody,
        headers: { 'idempotency-key': 'order-1' },
      });

    // The platform database will not store answers (a trigger, on either engine): the requests
    // take effect, unanswered in the database.
    const storeAnswers = failWrites(dataDir, 'platform', 'idempotency_records', 'UPDATE', {
      when: "NEW.state = 'DONE'",
      message: 'answers refused by the test',
    });
    const first = await deposit('deposit-1');
    expect(first.status).toBe(201);
    const placed = await order();
    expect(placed.status).toBe(201);
    const legs = [1, 2, 3].map((q) => limit(m, 'BUY', 'YES', m.reference - 12, q));
    const batch = () =>
      as(paper, `${svc!.api}/orders/batch`, {
        method: 'POST',
        json: { orders: legs },
        headers: { 'idempotency-key': 'batch-1' },
      });
    const batched = await batch();
    expect(batched.status).toBe(200);
    const legIds = (batched.body.results as { order: { id: string } }[]).map((r) => r.order.id);
    expect(legIds).toHaveLength(3);
    // Still running as far as the platform database knows: a retry now is refused, not run.
    expectContractError(await deposit('deposit-1'), 409, 'IDEMPOTENCY_KEY_IN_USE');

    // A key whose request never reached the engine (as if the crash came first).
    const neverRan = JSON.stringify({ amount_cents: 500 });
    const fingerprint = createHash('sha256')
      .update('POST /api/v1/wallet/deposits\n')
      .update(neverRan)
      .digest('hex');
    const at = new Date().toISOString();
    platform(
      dataDir,
      `INSERT INTO idempotency_records (owner_id, idem_key, fingerprint, state, created_at, expires_at)
       VALUES (?, 'deposit-2', ?, 'RUNNING', ?, '2999-01-01T00:00:00.000Z')`,
      `live:${live.userId}`,
      fingerprint,
      at,
    );

    await svc.stop('SIGKILL');
    storeAnswers();
    svc = await startService({ dataDir, env, testDatabase: true });

    const again = await deposit('deposit-1');
    const err = expectContractError(again, 409, 'IDEMPOTENT_REQUEST_APPLIED');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    // The deposit's ledger row carries the first request's id as its reference.
    expect(err.details).toEqual({
      idempotency_key: 'deposit-1',
      order_ids: [],
      reference_ids: [first.headers.get('x-request-id')],
    });
    const deposits = engineRows<{ amount_cents: number }>(
      dataDir,
      'live',
      "SELECT amount_cents FROM ledger WHERE user_id = ? AND type = 'DEPOSIT'",
      live.userId,
    );
    expect(deposits).toEqual([{ amount_cents: 12_345 }]);

    const orderAgain = await order();
    const orderErr = expectContractError(orderAgain, 409, 'IDEMPOTENT_REQUEST_APPLIED');
    expect(orderErr.details.order_ids).toEqual([placed.body.id]);
    const orders = engineRows<{ id: string }>(
      dataDir,
      'paper',
      "SELECT id FROM orders WHERE user_id = ? AND client_order_id = 'idem-1'",
      paper.userId,
    );
    expect(orders).toEqual([{ id: placed.body.id }]);

    // A batch's record names every leg's order.
    const batchErr = expectContractError(await batch(), 409, 'IDEMPOTENT_REQUEST_APPLIED');
    expect(batchErr.details.order_ids).toEqual(legIds);
    expect(
      engineRows<{ n: number }>(
        dataDir,
        'paper',
        'SELECT COUNT(*) AS n FROM orders WHERE user_id = ? AND price = ?',
        paper.userId,
        m.reference - 12,
      ),
    ).toEqual([{ n: 3 }]);

    // The request that never took effect runs now, once.
    const ran = await deposit('deposit-2', JSON.parse(neverRan));
    expect(ran.status).toBe(201);
    expect(ran.headers.get('idempotent-replayed')).toBeNull();
    const replay = await deposit('deposit-2', JSON.parse(neverRan));
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(
      engineRows<{ n: number }>(
        dataDir,
        'live',
        "SELECT COUNT(*) AS n FROM ledger WHERE user_id = ? AND type = 'DEPOSIT'",
        live.userId,
      ),
    ).toEqual([{ n: 2 }]);
  }, 120_000);
});
