import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { http, startApp, type Running } from '../support/harness.js';
import { createKey, sessionFor } from '../support/keys.js';

describe('Idempotency-Key is scoped per environment', () => {
  let svc: Running;
  beforeAll(async () => {
    svc = await startApp({ env: { SANDBOX_FEED_INTERVAL_MS: '0' } });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('the same key on the live and the paper engine runs twice, and each replays its own answer', async () => {
    const token = await sessionFor(svc.api);
    const scopes = { scopes: ['orders:write', 'orders:read'], acknowledge_write_scopes: true };
    const live = await createKey(svc.api, token, { ...scopes, environment: 'live' });
    const test = await createKey(svc.api, token, { ...scopes, environment: 'test' });
    const market = (await http(`${svc.api}/markets?limit=1&status=OPEN`)).body.data[0].id as string;
    const body = {
      market_id: market,
      action: 'BUY',
      side: 'YES',
      type: 'LIMIT',
      price: 5,
      quantity: 1,
    };
    const send = (key: string) =>
      http(`${svc.api}/orders`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'idempotency-key': 'k-cross' },
        json: body,
      });

    // Live: no money on the live engine, so the order is refused.
    const liveAnswer = await send(live.key);
    expect(liveAnswer.status).toBe(422);
    // Paper: a different world, so the same key is a new request and the order is placed.
    const paperAnswer = await send(test.key);
    expect(paperAnswer.status).toBe(201);
    expect(paperAnswer.headers.get('idempotent-replayed')).toBeNull();
    expect(paperAnswer.body.environment).toBe('test');
    // Each retry replays its own environment's answer.
    const liveAgain = await send(live.key);
    expect(liveAgain.status).toBe(422);
    expect(liveAgain.headers.get('idempotent-replayed')).toBe('true');
    const paperAgain = await send(test.key);
    expect(paperAgain.status).toBe(201);
    expect(paperAgain.headers.get('idempotent-replayed')).toBe('true');
    expect(paperAgain.body.id).toBe(paperAnswer.body.id);
    const paperOrders = await http(`${svc.api}/orders`, { headers: { 'x-api-key': test.key } });
    expect(paperOrders.body.data.length).toBe(1);
  });
});
