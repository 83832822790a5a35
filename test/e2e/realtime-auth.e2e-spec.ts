import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHmac } from 'node:crypto';
import type { ManualClock } from '../../src/common/clock/clock.js';
import { http, startApp, type Running } from '../support/harness.js';
import { createKey, sessionFor } from '../support/keys.js';
import { WsClient, type WsMessage } from '../support/ws.js';

/**
 * First-message authentication of /api/v1/ws (SPEC: WebSocket authentication; CONTRACT: Realtime):
 * `{"type":"auth","api_key"}` or `{"type":"auth","token"}` -> auth_ok; anything else -> an error
 * message and close 4401 (unauthenticated) or 4403 (forbidden).
 */
describe('realtime: authentication', () => {
  let svc: Running;
  let token: string;

  beforeAll(async () => {
    svc = await startApp({
      env: {
        SANDBOX_FEED_INTERVAL_MS: '0',
        RATE_LIMITS_ENABLED: 'false',
        WS_AUTH_TIMEOUT_MS: '300',
      },
    });
    token = await sessionFor(svc.api);
  });
  afterAll(async () => {
    await svc.close();
  });

  /** Sends `first` as the first frame and returns the error message and the close. */
  async function rejected(first: unknown): Promise<{ error: WsMessage; code: number }> {
    const c = await WsClient.connect(svc.baseUrl);
    if (typeof first === 'string') c.sendRaw(first);
    else c.send(first);
    const { code } = await c.waitClose();
    const errors = c.messages.filter((m) => m.type === 'error');
    expect(errors).toHaveLength(1);
    expect(c.messages).toHaveLength(1);
    return { error: errors[0], code };
  }

  it('authenticates a test key: auth_ok with its environment and scopes', async () => {
    const scopes = ['websocket', 'markets:read', 'orders:read'];
    const k = await createKey(svc.api, token, { scopes, environment: 'test' });
    const c = await WsClient.connect(svc.baseUrl);
    c.send({ type: 'auth', api_key: k.key });
    const ok = await c.waitFor((m) => m.type !== undefined);
    // A test key carries env:paper implicitly (CONTRACT: Access details).
    expect(ok).toEqual({
      type: 'auth_ok',
      environment: 'test',
      scopes: [...scopes, 'env:paper'],
      key_id: k.id,
    });
    // The connection is usable and stays open.
    await c.sync();
    expect(c.closed).toBeNull();
    await c.close();
  });

  it('authenticates a live key: environment live', async () => {
    const k = await createKey(svc.api, token, { scopes: ['websocket'], environment: 'live' });
    const c = await WsClient.connect(svc.baseUrl);
    c.send({ type: 'auth', api_key: k.key });
    const ok = await c.waitFor(() => true);
    expect(ok).toEqual({
      type: 'auth_ok',
      environment: 'live',
      scopes: ['websocket'],
      key_id: k.id,
    });
    await c.close();
  });

  it('a live key with env:paper is paper-only on the stream too: environment test, the paper book', async () => {
    const market = (await http(`${svc.api}/markets?limit=1&status=OPEN`)).body.data[0].id as string;
    const channel = `orderbook:${market}`;
    const snapshotWith = async (scopes: string[]) => {
      const k = await createKey(svc.api, token, { scopes, environment: 'live' });
      const c = await WsClient.connect(svc.baseUrl);
      c.send({ type: 'auth', api_key: k.key });
      const ok = await c.waitFor(() => true);
      expect((await c.subscribe([channel])).type).toBe('subscribed');
      const snap = await c.waitFor((m) => m.type === 'event' && m.data?.kind === 'snapshot');
      await c.close();
      return { ok, data: snap.data };
    };
    const paper = await snapshotWith(['websocket', 'env:paper']);
    expect(paper.ok).toMatchObject({ type: 'auth_ok', environment: 'test' });
    expect(paper.ok.scopes).toContain('env:paper');
    // The paper engine's house quotes the book; the live engine has no house liquidity.
    expect(paper.data.bids.length).toBeGreaterThan(0);
    const live = await snapshotWith(['websocket']);
    expect(live.ok).toMatchObject({ type: 'auth_ok', environment: 'live' });
    expect(live.data).toMatchObject({ kind: 'snapshot', bids: [], asks: [] });
  });

  it('authenticates a session token from POST /auth/login (first-party, live engine)', async () => {
    const c = await WsClient.connect(svc.baseUrl);
    c.send({ type: 'auth', token });
    const ok = await c.waitFor(() => true);
    expect(ok.type).toBe('auth_ok');
    expect(ok.environment).toBe('live');
    expect(ok.key_id).toBeNull();
    expect(ok.scopes).toEqual(expect.arrayContaining(['websocket', 'orders:read', 'wallet:read']));
    expect(ok.scopes).not.toContain('env:paper');
    expect(ok.scopes.some((s: string) => s.startsWith('admin:'))).toBe(false);
    // The same user as /auth/me says.
    const me = await http(`${svc.api}/auth/me`, { headers: { authorization: `Bearer ${token}` } });
    expect(me.status).toBe(200);
    await c.sync();
    expect(c.closed).toBeNull();
    await c.close();
  });

  it('a key without the websocket scope: INSUFFICIENT_SCOPE and close 4403', async () => {
    const k = await createKey(svc.api, token, { scopes: ['markets:read'], environment: 'test' });
    const { error, code } = await rejected({ type: 'auth', api_key: k.key });
    expect(code).toBe(4403);
    expect(error).toEqual({
      type: 'error',
      code: 'INSUFFICIENT_SCOPE',
      message: expect.any(String),
      details: { required_scopes: ['websocket'], missing_scopes: ['websocket'] },
    });
  });

  it('an unknown key (well-formed) and a malformed key: UNAUTHENTICATED and close 4401', async () => {
    for (const api_key of ['svc_test_' + 'A'.repeat(32), 'not-a-key', '']) {
      const { error, code } = await rejected({ type: 'auth', api_key });
      expect(code).toBe(4401);
      expect(error).toEqual({
        type: 'error',
        code: 'UNAUTHENTICATED',
        message: expect.any(String),
      });
    }
  });

  it('a bad session token: UNAUTHENTICATED and close 4401', async () => {
    const { error, code } = await rejected({ type: 'auth', token: 'eyJhbGciOi.bad.token' });
    expect(code).toBe(4401);
    expect(error.code).toBe('UNAUTHENTICATED');
  });

  it('an auth message with neither api_key nor token: UNAUTHENTICATED and close 4401', async () => {
    const { error, code } = await rejected({ type: 'auth' });
    expect(code).toBe(4401);
    expect(error.code).toBe('UNAUTHENTICATED');
  });

  it('an auth message with both api_key and token: UNAUTHENTICATED and close 4401, as HTTP with both', async () => {
    const k = await createKey(svc.api, token, { scopes: ['websocket'], environment: 'test' });
    const { error, code } = await rejected({ type: 'auth', api_key: k.key, token });
    expect(code).toBe(4401);
    expect(error).toEqual({
      type: 'error',
      code: 'UNAUTHENTICATED',
      message: 'Send one credential: api_key or token, not both',
    });
  });

  it('a revoked key: API_KEY_REVOKED and close 4401', async () => {
    const k = await createKey(svc.api, token, { scopes: ['websocket'], environment: 'test' });
    const rev = await http(`${svc.api}/api-keys/${k.id}/revoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(rev.status).toBe(200);
    const { error, code } = await rejected({ type: 'auth', api_key: k.key });
    expect(code).toBe(4401);
    expect(error).toEqual({
      type: 'error',
      code: 'API_KEY_REVOKED',
      message: expect.any(String),
      details: { key_id: k.id },
    });
  });

  it('a first message that is not auth: UNAUTHENTICATED and close 4401', async () => {
    for (const first of [
      { type: 'subscribe', channels: ['ticker'] },
      { type: 'ping' },
      { api_key: 'svc_test_' + 'A'.repeat(32) },
    ]) {
      const { error, code } = await rejected(first);
      expect(code).toBe(4401);
      expect(error.code).toBe('UNAUTHENTICATED');
    }
  });

  it('invalid JSON (or JSON that is not an object) first: an error and close 4401', async () => {
    for (const first of ['{not json', '"auth"', '[1,2]', 'null']) {
      const { error, code } = await rejected(first);
      expect(code).toBe(4401);
      expect(error).toEqual({ type: 'error', code: 'BAD_MESSAGE', message: expect.any(String) });
    }
  });

  it('no auth within WS_AUTH_TIMEOUT_MS: UNAUTHENTICATED and close 4401', async () => {
    const c = await WsClient.connect(svc.baseUrl);
    const t0 = Date.now();
    const { code } = await c.waitClose(3000);
    const waited = Date.now() - t0;
    expect(code).toBe(4401);
    expect(waited).toBeGreaterThanOrEqual(250);
    expect(waited).toBeLessThan(2000);
    expect(c.messages).toEqual([
      { type: 'error', code: 'UNAUTHENTICATED', message: expect.any(String) },
    ]);
  });

  it('an authenticated connection outlives the auth deadline', async () => {
    const k = await createKey(svc.api, token, { scopes: ['websocket'], environment: 'test' });
    const c = await WsClient.authed(svc.baseUrl, { api_key: k.key });
    await new Promise((r) => setTimeout(r, 600));
    await c.sync();
    expect(c.closed).toBeNull();
    await c.close();
  });

  it('a second auth after auth_ok is an error message; the connection stays open', async () => {
    const k = await createKey(svc.api, token, { scopes: ['websocket'], environment: 'test' });
    const c = await WsClient.authed(svc.baseUrl, { api_key: k.key });
    const from = c.mark();
    c.send({ type: 'auth', api_key: k.key });
    const err = await c.waitFor((m) => m.type === 'error', 3000, from);
    expect(err.code).toBe('BAD_MESSAGE');
    await c.sync();
    expect(c.closed).toBeNull();
    await c.close();
  });

  it('an expired key: API_KEY_EXPIRED and close 4401', async () => {
    const k = await createKey(svc.api, token, {
      scopes: ['websocket'],
      environment: 'test',
      expires_in_days: 1,
    });
    await (await WsClient.authed(svc.baseUrl, { api_key: k.key })).close();
    (svc.clock as ManualClock).advance(86_400_000 + 1000);
    const { error, code } = await rejected({ type: 'auth', api_key: k.key });
    expect(code).toBe(4401);
    expect(error.code).toBe('API_KEY_EXPIRED');
    token = await sessionFor(svc.api); // the session expired with the day, too
  });

  it('a signing-required key signs "<ts>.GET./api/v1/ws.": unsigned 4401, signed auth_ok', async () => {
    const k = await createKey(svc.api, token, {
      scopes: ['websocket'],
      environment: 'test',
      signing_required: true,
    });
    expect(k.signing_secret).toMatch(/^svc_sign_/);
    const unsigned = await rejected({ type: 'auth', api_key: k.key });
    expect(unsigned.code).toBe(4401);
    expect(unsigned.error.code).toBe('SIGNATURE_REQUIRED');
    const ts = String(Math.floor(svc.clock.now() / 1000));
    const sig = createHmac('sha256', k.signing_secret!)
      .update(`${ts}.GET./api/v1/ws.`)
      .digest('hex');
    const c = await WsClient.connect(svc.baseUrl);
    c.send({ type: 'auth', api_key: k.key, timestamp: ts, signature: `v1=${sig}` });
    expect((await c.waitFor(() => true)).type).toBe('auth_ok');
    await c.close();
    const bad = await rejected({
      type: 'auth',
      api_key: k.key,
      timestamp: ts,
      signature: `v1=${'0'.repeat(64)}`,
    });
    expect(bad.code).toBe(4401);
    expect(bad.error.code).toBe('SIGNATURE_INVALID');
  });
});

describe('realtime: a test key while the sandbox is off', () => {
  it('SANDBOX_DISABLED and close 4403; a live key still authenticates', async () => {
    const on = await startApp({ env: { SANDBOX_FEED_INTERVAL_MS: '0' } });
    const token = await sessionFor(on.api);
    const testKey = await createKey(on.api, token, { scopes: ['websocket'], environment: 'test' });
    const liveKey = await createKey(on.api, token, { scopes: ['websocket'], environment: 'live' });
    await on.close({ keepData: true });
    const off = await startApp({
      dataDir: on.dataDir,
      env: { SANDBOX_FEED_INTERVAL_MS: '0', DEVELOPER_SANDBOX_ENABLED: 'false' },
    });
    try {
      const c = await WsClient.connect(off.baseUrl);
      c.send({ type: 'auth', api_key: testKey.key });
      const { code } = await c.waitClose();
      expect(code).toBe(4403);
      expect(c.messages).toEqual([
        { type: 'error', code: 'SANDBOX_DISABLED', message: expect.any(String) },
      ]);
      const live = await WsClient.authed(off.baseUrl, { api_key: liveKey.key });
      expect(live.messages[0]).toMatchObject({ type: 'auth_ok', environment: 'live' });
      await live.close();
    } finally {
      await off.close();
    }
  });
});
