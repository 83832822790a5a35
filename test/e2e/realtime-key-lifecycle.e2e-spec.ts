import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ManualClock } from '../../src/common/clock/clock.js';
import { http, startApp, type Running } from '../support/harness.js';
import { createKey, sessionFor } from '../support/keys.js';
import { WsClient } from '../support/ws.js';

const SCOPES = {
  scopes: ['websocket', 'orders:read', 'orders:write'],
  acknowledge_write_scopes: true,
};

// One service for the file: each test signs in anew and makes its own keys, and the clock only
// moves forward (a key's or session's expiry is measured from when the test made it).
describe('realtime sessions end with their key or session token', () => {
  let svc: Running;
  beforeAll(async () => {
    svc = await startApp({ env: { SANDBOX_FEED_INTERVAL_MS: '0' } });
  });
  afterAll(async () => {
    await svc?.close();
  });

  it('revoking a key closes its open connections at once (4401 API_KEY_REVOKED); other keys stay', async () => {
    const token = await sessionFor(svc.api);
    const a = await createKey(svc.api, token, SCOPES);
    const b = await createKey(svc.api, token, SCOPES);
    const wa = await WsClient.authed(svc.baseUrl, { api_key: a.key });
    const wb = await WsClient.authed(svc.baseUrl, { api_key: b.key });
    expect((await wa.subscribe(['orders'])).type).toBe('subscribed');
    const res = await http(`${svc.api}/api-keys/${a.id}/revoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(200);
    expect(await wa.waitClose()).toMatchObject({ code: 4401 });
    expect(wa.messages.some((m) => m.type === 'error' && m.code === 'API_KEY_REVOKED')).toBe(true);
    // Nothing private reaches the closed connection; the other key's connection stays open.
    const market = (await http(`${svc.api}/markets?limit=1&status=OPEN`)).body.data[0].id as string;
    await http(`${svc.api}/orders`, {
      method: 'POST',
      headers: { 'x-api-key': b.key },
      json: { market_id: market, action: 'BUY', side: 'YES', type: 'LIMIT', price: 5, quantity: 1 },
    });
    expect(wa.messages.some((m) => m.type === 'event')).toBe(false);
    expect(wb.closed).toBeNull();
    await wb.close();
  });

  it('rotating a key closes the connections made with its old secret (4401 API_KEY_ROTATED)', async () => {
    const token = await sessionFor(svc.api);
    const a = await createKey(svc.api, token, SCOPES);
    const wa = await WsClient.authed(svc.baseUrl, { api_key: a.key });
    const rotated = await http(`${svc.api}/api-keys/${a.id}/rotate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(rotated.status).toBe(200);
    expect(await wa.waitClose()).toMatchObject({ code: 4401, reason: 'API_KEY_ROTATED' });
    // Told apart from a revocation: the key lives on, with a new secret.
    const errors = wa.messages.filter((m) => m.type === 'error');
    expect(errors).toEqual([
      {
        type: 'error',
        code: 'API_KEY_ROTATED',
        message: 'The API key was rotated: reconnect with its new secret',
      },
    ]);
    // The new secret authenticates.
    const again = await WsClient.authed(svc.baseUrl, { api_key: rotated.body.key });
    await again.close();
  });

  it('a key that expires while connected is cut within a second (4401 API_KEY_EXPIRED)', async () => {
    const token = await sessionFor(svc.api);
    const a = await createKey(svc.api, token, { ...SCOPES, expires_in_days: 1 });
    const wa = await WsClient.authed(svc.baseUrl, { api_key: a.key });
    (svc.clock as ManualClock).advance(86_400_000);
    expect(await wa.waitClose(3000)).toMatchObject({ code: 4401 });
    expect(wa.messages.some((m) => m.type === 'error' && m.code === 'API_KEY_EXPIRED')).toBe(true);
  });

  it('a session token that expires while connected is cut within a second (4401 UNAUTHENTICATED)', async () => {
    const token = await sessionFor(svc.api);
    const ws = await WsClient.authed(svc.baseUrl, { token });
    const clock = svc.clock as ManualClock;
    // Just before the 12-hour expiry it stays open.
    clock.advance(12 * 3600 * 1000 - 5000);
    await new Promise((r) => setTimeout(r, 1500));
    expect(ws.closed).toBeNull();
    await ws.sync(); // ping answered: the connection is alive
    clock.advance(5000);
    expect(await ws.waitClose(3000)).toMatchObject({ code: 4401 });
    expect(ws.messages).toContainEqual({
      type: 'error',
      code: 'UNAUTHENTICATED',
      message: 'The session token expired',
    });
    // The same token is refused over HTTP too.
    const me = await http(`${svc.api}/auth/me`, { headers: { authorization: `Bearer ${token}` } });
    expect(me.status).toBe(401);
  });
});
