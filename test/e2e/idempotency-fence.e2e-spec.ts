import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectContractError, type JsonResponse, type Running } from '../support/harness.js';
import {
  allOrders,
  as,
  limit,
  ORDER_SCOPES,
  startOrdersApp,
  trader,
  TRADABLE,
  type Trader,
} from '../support/orders.js';
import { openDatabaseOf } from '../support/test-database.js';
import { walletOf } from '../support/wallet.js';

/**
 * The engine's fence of applied Idempotency-Keys (issue 24): a request under a key whose first
 * request already changed the engine never takes effect again, even when the key's claim was
 * released under it. In cluster mode a peer releases the claim of an instance it takes for
 * stopped (no effect yet) while that instance's command is still on its way to the writer
 * (test/cluster/idempotency-fence.cluster-spec.ts drives that); here the release is the claim's
 * row deleted from the platform database after the first request, which lets the retry through
 * the claim as the settle did. The engine refuses it: 409 IDEMPOTENT_REQUEST_APPLIED naming what
 * the first did, nothing placed or moved, and that answer is the key's from then on.
 */
describe('Idempotency-Key: the engine refuses a second effect under a key', () => {
  let svc: Running;
  let t: Trader;
  const m = TRADABLE[2];

  beforeAll(async () => {
    svc = await startOrdersApp();
    t = await trader(svc, 'fence@idempotency.test', { scopes: [...ORDER_SCOPES, 'wallet:write'] });
  });
  afterAll(async () => {
    await svc.close();
  });

  const send = (key: string, path: string, json: unknown): Promise<JsonResponse> =>
    as(t, `${svc.api}${path}`, { method: 'POST', json, headers: { 'idempotency-key': key } });

  /** The key's claim is released, as a peer settles a claim whose request had no effect yet. */
  const release = (key: string): void => {
    const db = openDatabaseOf(svc.dataDir, 'platform');
    try {
      const gone = db.prepare('DELETE FROM idempotency_records WHERE idem_key = ?').run(key);
      expect(gone.changes).toBe(1);
    } finally {
      db.close();
    }
  };

  /** The 409 naming the first request's effect, and its replay to the next try. */
  const expectApplied = async (
    again: () => Promise<JsonResponse>,
    key: string,
    effect: { order_ids: string[]; reference_ids: string[] },
  ): Promise<void> => {
    const refused = await again();
    const err = expectContractError(refused, 409, 'IDEMPOTENT_REQUEST_APPLIED');
    expect(err.details).toEqual({ idempotency_key: key, ...effect });
    const replayed = await again();
    expect(replayed.status).toBe(409);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body.error.details).toEqual(err.details);
  };

  it('an order: the retry through a released claim places nothing', async () => {
    const body = limit(m, 'BUY', 'YES', m.reference - 10, 2);
    const first = await send('fence-order', '/orders', body);
    expect(first.status).toBe(201);
    const before = await allOrders(svc, t);
    const wallet = await walletOf(svc, t);
    release('fence-order');
    await expectApplied(() => send('fence-order', '/orders', body), 'fence-order', {
      order_ids: [first.body.id as string],
      reference_ids: [],
    });
    expect(await allOrders(svc, t)).toEqual(before);
    expect(await walletOf(svc, t)).toEqual(wallet);
  });

  it('a batch: its legs all run under one key; its retry is refused whole, naming every order', async () => {
    const legs = [1, 2, 3].map((q) => limit(m, 'BUY', 'YES', m.reference - 11, q));
    const first = await send('fence-batch', '/orders/batch', { orders: legs });
    expect(first.status).toBe(200);
    const ids = (first.body.results as { status: number; order: { id: string } }[]).map((r) => {
      expect(r.status).toBe(201);
      return r.order.id;
    });
    const before = await allOrders(svc, t);
    release('fence-batch');
    await expectApplied(
      () => send('fence-batch', '/orders/batch', { orders: legs }),
      'fence-batch',
      {
        order_ids: ids,
        reference_ids: [],
      },
    );
    expect(await allOrders(svc, t)).toEqual(before);
  });

  it('paper money added: the retry adds none', async () => {
    const fund = { amount_cents: 700 };
    const first = await send('fence-fund', '/sandbox/wallet/fund', fund);
    expect(first.status).toBe(201);
    const wallet = await walletOf(svc, t);
    release('fence-fund');
    await expectApplied(() => send('fence-fund', '/sandbox/wallet/fund', fund), 'fence-fund', {
      order_ids: [],
      // The funding's ledger reference is its request's id.
      reference_ids: [first.headers.get('x-request-id')!],
    });
    expect(await walletOf(svc, t)).toEqual(wallet);
  });

  it('a request that changed nothing (refused) leaves its key free to run again', async () => {
    const huge = limit(m, 'BUY', 'YES', m.reference - 10, 100_000); // beyond the balance
    expect((await send('fence-refused', '/orders', huge)).status).toBe(422);
    release('fence-refused');
    const body = limit(m, 'BUY', 'YES', m.reference - 10, 1);
    // Another body under the released key: its claim is new, and the engine holds no effect of it.
    const placed = await send('fence-refused', '/orders', body);
    expect(placed.status).toBe(201);
  });
});
