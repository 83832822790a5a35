import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectContractError, http } from '../support/harness.js';
import { startService, type ServiceProcess } from '../support/process.js';
import { paperQuery, STARTING_BALANCE, TRADABLE, trader, type Trader } from '../support/orders.js';
import { dropDatabaseOf, serviceDatabaseEnv } from '../support/test-database.js';
import { until } from '../support/webhooks.js';
import { REQUESTER_SCOPES, responder, rfqClient, walletCents, type Json } from '../support/rfq.js';

/**
 * The built server killed with SIGKILL between a quote and its accept, restarted on the same
 * DATA_DIR: the quote is still OPEN with its hold (the responder's reserved cents), the accept
 * then trades exactly once, and the expiry timers come back from the OPEN rows.
 */
describe('rfq: kill -9 between quote and accept', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-rfq-kill-'));
  const env = {
    SANDBOX_FEED_INTERVAL_MS: '0',
    RATE_LIMITS_ENABLED: 'false',
    SANDBOX_CLOCK_CONTROL: 'true',
    LOG_LEVEL: 'warn',
  };
  let svc: ServiceProcess | undefined;

  afterAll(async () => {
    await svc?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
    await dropDatabaseOf(dataDir);
  });

  it('an OPEN quote keeps its hold across SIGKILL; the accept then works once; timers return', async () => {
    // On PostgreSQL + Redis in that pass (the same database again after the kill).
    Object.assign(env, await serviceDatabaseEnv(dataDir));
    svc = await startService({ dataDir, env });
    const market = TRADABLE[0];
    let rfq = rfqClient(svc);
    const req: Trader = await trader(svc, 'req@rfq-kill.test', { scopes: REQUESTER_SCOPES });
    const resp: Trader = await responder(svc);
    const r = await rfq.create(req, market.id, 10, 600);
    const short = await rfq.create(req, market.id, 1, 10);
    const q = await rfq.quote(resp, r.id, { bid: 40, ask: 45, expires_in_seconds: 300 });
    expect((await walletCents(svc, resp)).reserved).toBe(550);

    await svc.stop('SIGKILL');
    svc = await startService({ dataDir, env });
    rfq = rfqClient(svc);
    expect((await rfq.quotes(resp, r.id)).body.data).toEqual([
      expect.objectContaining({ id: q.id, status: 'OPEN' }),
    ]);
    expect((await walletCents(svc, resp)).reserved).toBe(550);

    const results = await Promise.all([
      rfq.acceptRaw(req, q.id, { action: 'BUY', side: 'YES' }),
      rfq.acceptRaw(req, q.id, { action: 'BUY', side: 'YES' }),
    ]);
    expect(results.map((x) => x.status).sort()).toEqual([200, 409]);
    const ok = results.find((x) => x.status === 200)!.body as Json;
    expect(ok.rfq.status).toBe('FILLED');
    expect((await walletCents(svc, req)).balance).toBe(STARTING_BALANCE - 450);
    const respWallet = await walletCents(svc, resp);
    expect(respWallet.balance).toBe(STARTING_BALANCE - 550);
    expect(respWallet.reserved).toBe(0);
    const orders = paperQuery<{ n: number }>(
      svc,
      'SELECT COUNT(*) AS n FROM orders WHERE rfq_id = ?',
      r.id,
    );
    expect(orders[0].n).toBe(2);
    expectContractError(
      await rfq.acceptRaw(req, q.id, { action: 'BUY', side: 'YES' }),
      409,
      'RFQ_NOT_OPEN',
    );

    // The short RFQ's timer came back from its row: moving the clock past it expires it.
    const moved = await http(`${svc.api}/sandbox/clock`, {
      method: 'POST',
      json: { advance_seconds: 11 },
    });
    expect(moved.status).toBe(200);
    // Read from the file, not through the API (a read would expire it on its own).
    await until(
      () =>
        paperQuery<{ status: string }>(svc!, 'SELECT status FROM rfqs WHERE id = ?', short.id)[0]
          .status,
      (s) => s === 'EXPIRED',
      'the restored expiry timer',
      3000,
    );
  });
});
