import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHmac } from 'node:crypto';
import type { ManualClock } from '../../src/common/clock/clock.js';
import { signedFetch } from '../support/access.js';
import { expectError, http, type Running } from '../support/harness.js';
import { createKey, sessionFor, type CreatedKey } from '../support/keys.js';
import { limit, ORDER_SCOPES, startOrdersApp, TRADABLE } from '../support/orders.js';
import { WsClient } from '../support/ws.js';

/**
 * CONTRACT.md error table: a signed request whose signature was already accepted within the
 * skew window is 401 SIGNATURE_REPLAYED (one instance: the in-memory replay cache; the Redis one
 * is covered by test/e2e/redis-shared-state.e2e-spec.ts).
 */
describe('request signing: a signature is accepted once', () => {
  let svc: Running;
  let k: CreatedKey;
  let secret: string;
  const clock = (): ManualClock => svc.clock as ManualClock;
  const now = (): number => svc.clock.nowSeconds();

  beforeAll(async () => {
    svc = await startOrdersApp();
    const token = await sessionFor(svc.api);
    k = await createKey(svc.api, token, {
      scopes: [...ORDER_SCOPES, 'websocket'],
      acknowledge_write_scopes: true,
      signing_required: true,
    });
    secret = k.signing_secret!;
  });
  afterAll(async () => {
    await svc.close();
  });

  /** The key's orders in the market, read with a fresh signature each time. */
  async function ordersIn(marketId: string, ts: number): Promise<{ id: string }[]> {
    const path = `/api/v1/orders?market_id=${marketId}&limit=100`;
    const res = await signedFetch(svc, { key: k.key, secret, path, timestamp: ts });
    expect(res.status).toBe(200);
    return res.body.data as { id: string }[];
  }

  it('the same signed POST /orders twice: the second is 401 SIGNATURE_REPLAYED and places nothing', async () => {
    const m = TRADABLE[0];
    const body = JSON.stringify(limit(m, 'BUY', 'YES', m.reference - 10, 3));
    const ts = now();
    const send = (timestamp: number) =>
      signedFetch(svc, {
        key: k.key,
        secret,
        method: 'POST',
        path: '/api/v1/orders',
        body,
        timestamp,
      });
    const first = await send(ts);
    expect(first.status).toBe(201);
    const again = expectError(await send(ts), 401, 'SIGNATURE_REPLAYED');
    expect(again.details).toEqual({ window_seconds: 300 });
    expect(JSON.stringify(again)).not.toContain(k.key);
    expect((await ordersIn(m.id, ts - 1)).map((o) => o.id)).toEqual([first.body.id]);
    // A new timestamp is a new signature: the same order body is accepted as a second order.
    const second = await send(ts + 1);
    expect(second.status).toBe(201);
    expect((await ordersIn(m.id, ts - 2)).map((o) => o.id).sort()).toEqual(
      [first.body.id, second.body.id].sort(),
    );
  });

  it('the signature is compared as verified: padding the header does not make it new', async () => {
    const ts = now() - 10;
    const path = '/api/v1/markets?limit=1';
    const sig = `v1=${createHmac('sha256', secret).update(`${ts}.GET.${path}.`).digest('hex')}`;
    const send = (signature: string) =>
      signedFetch(svc, { key: k.key, secret, path, timestamp: ts, signature });
    expect((await send(sig)).status).toBe(200);
    expectError(await send(`  ${sig} `), 401, 'SIGNATURE_REPLAYED');
  });

  it('a forged signature is not remembered: the genuine one after it still passes', async () => {
    const ts = now() - 20;
    const path = '/api/v1/markets?limit=2';
    expectError(
      await signedFetch(svc, {
        key: k.key,
        secret,
        path,
        timestamp: ts,
        signature: `v1=${'0'.repeat(64)}`,
      }),
      401,
      'SIGNATURE_INVALID',
    );
    expect((await signedFetch(svc, { key: k.key, secret, path, timestamp: ts })).status).toBe(200);
    expectError(
      await signedFetch(svc, { key: k.key, secret, path, timestamp: ts }),
      401,
      'SIGNATURE_REPLAYED',
    );
  });

  it('a refusal after the signature (environment routing) still spends it', async () => {
    const ts = now() - 30;
    const path = '/api/v1/wallet/withdrawals';
    const body = '{}';
    const send = () =>
      signedFetch(svc, { key: k.key, secret, method: 'POST', path, body, timestamp: ts });
    expectError(await send(), 403, 'TEST_KEY_LIVE_ENDPOINT');
    expectError(await send(), 401, 'SIGNATURE_REPLAYED');
  });

  it('the realtime auth message is single-use too: a second socket with it is closed 4401', async () => {
    const ts = String(now() - 40);
    const auth = {
      type: 'auth',
      api_key: k.key,
      timestamp: ts,
      signature: `v1=${createHmac('sha256', secret).update(`${ts}.GET./api/v1/ws.`).digest('hex')}`,
    };
    const a = await WsClient.connect(svc.baseUrl);
    a.send(auth);
    expect((await a.waitFor(() => true)).type).toBe('auth_ok');
    const b = await WsClient.connect(svc.baseUrl);
    b.send(auth);
    expect(await b.waitClose()).toEqual({ code: 4401, reason: 'SIGNATURE_REPLAYED' });
    expect(b.messages).toEqual([
      expect.objectContaining({ type: 'error', code: 'SIGNATURE_REPLAYED' }),
    ]);
    await a.close();
  });

  it('past the window the old signature is stale (SIGNATURE_TIMESTAMP_SKEW), never accepted again', async () => {
    const ts = now();
    const path = '/api/v1/markets?limit=3';
    expect((await signedFetch(svc, { key: k.key, secret, path, timestamp: ts })).status).toBe(200);
    clock().advance(300_000);
    expectError(
      await signedFetch(svc, { key: k.key, secret, path, timestamp: ts }),
      401,
      'SIGNATURE_REPLAYED',
    );
    clock().advance(1_000);
    expectError(
      await signedFetch(svc, { key: k.key, secret, path, timestamp: ts }),
      401,
      'SIGNATURE_TIMESTAMP_SKEW',
    );
    expect((await signedFetch(svc, { key: k.key, secret, path, timestamp: now() })).status).toBe(
      200,
    );
  });

  it('OpenAPI: every operation that takes a key lists SIGNATURE_REPLAYED under its 401', async () => {
    const doc = (await http(`${svc.api}/openapi.json`)).body as {
      paths: Record<
        string,
        Record<string, { responses?: Record<string, unknown>; 'x-error-codes'?: string[] }>
      >;
    };
    let checked = 0;
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        if (op.responses?.['401'] === undefined) continue;
        checked++;
        expect({ op: `${method} ${path}`, codes: op['x-error-codes'] }).toEqual({
          op: `${method} ${path}`,
          codes: expect.arrayContaining(['SIGNATURE_REPLAYED', 'SIGNATURE_INVALID']),
        });
      }
    }
    expect(checked).toBeGreaterThan(50);
    expect(doc.paths['/api/v1/orders'].post['x-error-codes']).toContain('SIGNATURE_REPLAYED');
  });
});
