import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ManualClock } from '../../src/common/clock/clock.js';
import {
  ADMIN,
  asKey,
  asSession,
  createKey,
  createKeyRaw,
  KEY_FORMAT,
  login,
  meWithKey,
  READ_SCOPES,
  RESPONDER,
  startAccessApp,
  TRADER,
  UNVERIFIED,
} from '../support/access.js';
import { indexesOf, queryPlan } from '../support/db-introspection.js';
import { expectError, http, type Running } from '../support/harness.js';
import { openDatabaseOf } from '../support/test-database.js';

const KEY_RECORD_FIELDS = [
  'created_at',
  'environment',
  'expires_at',
  'id',
  'last_used_at',
  'name',
  'prefix',
  'revoked_at',
  'scopes',
  'signing_required',
  'tier',
];

async function listKeys(svc: Running, session: string) {
  const res = await asSession(session, `${svc.api}/api-keys?limit=200`);
  expect(res.status).toBe(200);
  return res;
}

describe('API keys: creation rules', () => {
  let svc: Running;
  let trader: string;
  let unverified: string;
  let admin: string;
  beforeAll(async () => {
    svc = await startAccessApp();
    [trader, unverified, admin] = await Promise.all([
      login(svc, TRADER),
      login(svc, UNVERIFIED),
      login(svc, ADMIN),
    ]);
  });
  afterAll(async () => {
    await svc.close();
  });

  it('environment fixes the prefix: svc_live_ / svc_test_ + 32 base62; the record has the contract fields', async () => {
    const live = await createKey(svc, trader, { name: 'live-one', environment: 'live' });
    const test = await createKey(svc, trader, { name: 'test-one', environment: 'test' });
    expect(live.key).toMatch(KEY_FORMAT);
    expect(live.key.startsWith('svc_live_')).toBe(true);
    expect(test.key).toMatch(KEY_FORMAT);
    expect(test.key.startsWith('svc_test_')).toBe(true);
    expect(live.id).toMatch(/^key_/);
    expect(live.prefix).toBe(live.key.slice(0, 13));
    expect(test.prefix).toBe(test.key.slice(0, 13));
    const { key: _key, ...record } = live;
    expect(Object.keys(record).sort()).toEqual(KEY_RECORD_FIELDS);
    expect(live).toMatchObject({
      name: 'live-one',
      environment: 'live',
      tier: 'FREE',
      expires_at: null,
      signing_required: false,
      created_at: '2026-11-22T12:00:00.000Z',
      last_used_at: null,
      revoked_at: null,
    });
    expect(live).not.toHaveProperty('signing_secret');
  });

  it('default scopes are exactly the read-only scopes (+ env:paper for test keys)', async () => {
    const live = await createKey(svc, trader, { name: 'defaults-live' });
    const test = await createKey(svc, trader, { name: 'defaults-test', environment: 'test' });
    expect(live.scopes).toEqual(READ_SCOPES);
    expect(test.scopes).toEqual([...READ_SCOPES, 'env:paper']);
    expect((await meWithKey(svc, live.key)).body.credential.scopes).toEqual(READ_SCOPES);
    expect((await meWithKey(svc, test.key)).body.credential.scopes).toEqual([
      ...READ_SCOPES,
      'env:paper',
    ]);
  });

  it('write scopes without acknowledge_write_scopes: 422 WRITE_SCOPES_NOT_ACKNOWLEDGED, nothing created', async () => {
    const before = (await listKeys(svc, trader)).body.data.length;
    for (const ack of [undefined, false]) {
      const res = await createKeyRaw(svc, trader, {
        name: 'writer',
        environment: 'live',
        scopes: ['markets:read', 'orders:write'],
        ...(ack === undefined ? {} : { acknowledge_write_scopes: ack }),
      });
      const err = expectError(res, 422, 'WRITE_SCOPES_NOT_ACKNOWLEDGED');
      expect(err.details.write_scopes).toEqual(['orders:write']);
    }
    expect((await listKeys(svc, trader)).body.data.length).toBe(before);

    const ok = await createKey(svc, trader, {
      name: 'writer',
      scopes: ['markets:read', 'orders:write'],
      acknowledge_write_scopes: true,
    });
    expect(ok.scopes).toEqual(['markets:read', 'orders:write']);
  });

  it('write scopes on an unverified account: 403 EMAIL_NOT_VERIFIED (read-only keys are fine)', async () => {
    const res = await createKeyRaw(svc, unverified, {
      name: 'unverified-writer',
      environment: 'live',
      scopes: ['orders:write'],
      acknowledge_write_scopes: true,
    });
    expectError(res, 403, 'EMAIL_NOT_VERIFIED');
    expect((await listKeys(svc, unverified)).body.data).toHaveLength(0);
    const readOnly = await createKey(svc, unverified, { name: 'reader' });
    expect(readOnly.scopes).toEqual(READ_SCOPES);
  });

  it('admin scopes are 403 ADMIN_SCOPE_FORBIDDEN, for the admin user too', async () => {
    for (const session of [trader, admin]) {
      for (const scopes of [['admin:read'], ['admin:write'], ['markets:read', 'admin:read']]) {
        const res = await createKeyRaw(svc, session, {
          name: 'admin-key',
          environment: 'live',
          scopes,
          acknowledge_write_scopes: true,
        });
        const err = expectError(res, 403, 'ADMIN_SCOPE_FORBIDDEN');
        expect(err.details.forbidden_scopes).toEqual(scopes.filter((s) => s.startsWith('admin')));
      }
    }
    expect((await listKeys(svc, admin)).body.data).toHaveLength(0);
  });

  it('unknown scopes, bad environments and expires_in_days outside 1..365 are 400 VALIDATION_FAILED', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ scopes: ['markets:read', 'markets:delete'] }, 'scopes'],
      [{ scopes: 'markets:read' }, 'scopes'],
      [{ expires_in_days: 0 }, 'expires_in_days'],
      [{ expires_in_days: 366 }, 'expires_in_days'],
      [{ expires_in_days: 1.5 }, 'expires_in_days'],
      [{ expires_in_days: '7' }, 'expires_in_days'],
      [{ environment: 'prod' }, 'environment'],
      [{ name: '' }, 'name'],
    ];
    for (const [patch, field] of cases) {
      const res = await createKeyRaw(svc, trader, { name: 'v', environment: 'live', ...patch });
      const err = expectError(res, 400, 'VALIDATION_FAILED');
      expect(err.details.fields.map((f: { field: string }) => f.field)).toContain(field);
    }
    const missing = await createKeyRaw(svc, trader, {});
    const err = expectError(missing, 400, 'VALIDATION_FAILED');
    expect(err.details.fields.map((f: { field: string }) => f.field).sort()).toEqual([
      'environment',
      'name',
    ]);
    // The edges of the range are accepted.
    for (const days of [1, 365]) {
      const k = await createKey(svc, trader, { name: `days-${days}`, expires_in_days: days });
      expect(k.expires_at).toBe(
        new Date(Date.parse('2026-11-22T12:00:00Z') + days * 86_400_000).toISOString(),
      );
    }
  });

  it('a key without markets:read calling GET /markets is 403 INSUFFICIENT_SCOPE; no key at all is 200', async () => {
    const k = await createKey(svc, trader, { name: 'orders-only', scopes: ['orders:read'] });
    const res = await asKey(k.key, `${svc.api}/markets?limit=1`);
    const err = expectError(res, 403, 'INSUFFICIENT_SCOPE');
    expect(err.details.required_scopes).toEqual(['markets:read']);
    expect(err.details.missing_scopes).toEqual(['markets:read']);
    const list = await http(`${svc.api}/markets?limit=1`);
    expect(list.status).toBe(200);
    expectError(
      await asKey(k.key, `${svc.api}/markets/${list.body.data[0].id}`),
      403,
      'INSUFFICIENT_SCOPE',
    );
    // The same key still authenticates where no scope is needed.
    expect((await meWithKey(svc, k.key)).status).toBe(200);
    const withScope = await createKey(svc, trader, { name: 'markets', scopes: ['markets:read'] });
    expect((await asKey(withScope.key, `${svc.api}/markets?limit=1`)).status).toBe(200);
  });

  it('key lookup is one indexed lookup: api_keys.secret_hash has a unique index the query uses', () => {
    const onHash = indexesOf(svc.dataDir, 'platform', 'api_keys').filter(
      (i) => i.columns.length === 1 && i.columns[0] === 'secret_hash',
    );
    expect(onHash).toHaveLength(1);
    expect(onHash[0].unique).toBe(true);
    const plan = queryPlan(
      svc.dataDir,
      'platform',
      `SELECT * FROM api_keys WHERE secret_hash = '${'0'.repeat(64)}'`,
    );
    // SQLite: "SEARCH api_keys USING INDEX <name> (secret_hash=?)"; PostgreSQL: "Index Scan using
    // <name> on api_keys".
    expect(plan).toMatch(
      new RegExp(
        `USING INDEX ${onHash[0].name}\\b|Index Scan using "?${onHash[0].name}"? on api_keys`,
      ),
    );
  });
});

describe('API keys: lifecycle (revoke, rotate, list, ownership, tiers)', () => {
  let svc: Running;
  let trader: string;
  let responder: string;
  let admin: string;
  beforeAll(async () => {
    svc = await startAccessApp();
    [trader, responder, admin] = await Promise.all([
      login(svc, TRADER),
      login(svc, RESPONDER),
      login(svc, ADMIN),
    ]);
  });
  afterAll(async () => {
    await svc.close();
  });

  it('revoke: the very next request is 401 API_KEY_REVOKED (even right after cached use)', async () => {
    const k = await createKey(svc, trader, { name: 'to-revoke' });
    // Warm the lookup cache.
    expect((await meWithKey(svc, k.key)).status).toBe(200);
    expect((await meWithKey(svc, k.key)).status).toBe(200);
    const rev = await asSession(trader, `${svc.api}/api-keys/${k.id}/revoke`, { method: 'POST' });
    expect(rev.status).toBe(200);
    expect(rev.body).toMatchObject({ id: k.id, revoked_at: '2026-11-22T12:00:00.000Z' });
    expect(rev.body).not.toHaveProperty('key');
    const err = expectError(await meWithKey(svc, k.key), 401, 'API_KEY_REVOKED');
    expect(err.details.key_id).toBe(k.id);
    expect(JSON.stringify(err)).not.toContain(k.key);
    expectError(await asKey(k.key, `${svc.api}/markets`), 401, 'API_KEY_REVOKED');
    // Revoking again is harmless; rotating a revoked key is refused.
    expect(
      (await asSession(trader, `${svc.api}/api-keys/${k.id}/revoke`, { method: 'POST' })).body
        .revoked_at,
    ).toBe('2026-11-22T12:00:00.000Z');
    expectError(
      await asSession(trader, `${svc.api}/api-keys/${k.id}/rotate`, { method: 'POST' }),
      409,
      'API_KEY_NOT_ACTIVE',
    );
    const listed = (await listKeys(svc, trader)).body.data.find(
      (x: { id: string }) => x.id === k.id,
    );
    expect(listed.revoked_at).toBe('2026-11-22T12:00:00.000Z');
  });

  it('rotate: same id and settings, old secret 401 UNAUTHENTICATED, new secret works', async () => {
    const k = await createKey(svc, trader, {
      name: 'to-rotate',
      environment: 'test',
      scopes: ['markets:read', 'orders:write'],
      acknowledge_write_scopes: true,
      expires_in_days: 30,
    });
    expect((await meWithKey(svc, k.key)).status).toBe(200);
    const rot = await asSession(trader, `${svc.api}/api-keys/${k.id}/rotate`, { method: 'POST' });
    expect(rot.status).toBe(200);
    expect(rot.body.id).toBe(k.id);
    expect(rot.body.key).toMatch(KEY_FORMAT);
    expect(rot.body.key.startsWith('svc_test_')).toBe(true);
    expect(rot.body.key).not.toBe(k.key);
    expect(rot.body.prefix).toBe(rot.body.key.slice(0, 13));
    for (const f of [
      'name',
      'environment',
      'scopes',
      'tier',
      'expires_at',
      'signing_required',
      'created_at',
    ]) {
      expect(rot.body[f]).toEqual(k[f as keyof typeof k]);
    }
    const old = expectError(await meWithKey(svc, k.key), 401, 'UNAUTHENTICATED');
    expect(JSON.stringify(old)).not.toContain(k.key);
    const me = await meWithKey(svc, rot.body.key);
    expect(me.status).toBe(200);
    expect(me.body.credential).toMatchObject({
      key_id: k.id,
      environment: 'test',
      scopes: ['markets:read', 'orders:write', 'env:paper'],
    });
    const listed = (await listKeys(svc, trader)).body.data.filter(
      (x: { id: string }) => x.id === k.id,
    );
    expect(listed).toHaveLength(1);
    expect(listed[0].prefix).toBe(rot.body.prefix);
  });

  it('list never returns key, signing_secret or secret hashes', async () => {
    const plain = await createKey(svc, trader, { name: 'listed' });
    const signing = await createKey(svc, trader, {
      name: 'listed-signing',
      signing_required: true,
    });
    const res = await listKeys(svc, trader);
    expect(res.body.next_cursor).toBeNull();
    for (const item of res.body.data) {
      expect(Object.keys(item).sort()).toEqual(KEY_RECORD_FIELDS);
    }
    const db = openDatabaseOf(svc.dataDir, 'platform', { readonly: true });
    const stored = db.prepare('SELECT secret_hash, signing_secret_enc FROM api_keys').all() as {
      secret_hash: string;
      signing_secret_enc: string | null;
    }[];
    db.close();
    for (const s of [plain.key, signing.key, signing.signing_secret!])
      expect(res.text).not.toContain(s);
    for (const row of stored) {
      expect(res.text).not.toContain(row.secret_hash);
      if (row.signing_secret_enc !== null) expect(res.text).not.toContain(row.signing_secret_enc);
    }
  });

  it('API keys cannot manage keys or security settings: 403 SESSION_REQUIRED', async () => {
    const k = await createKey(svc, trader, {
      name: 'manager?',
      scopes: ['markets:read', 'users:write'],
      acknowledge_write_scopes: true,
    });
    const calls: [string, string, unknown?][] = [
      ['GET', '/api-keys'],
      ['POST', '/api-keys', { name: 'x', environment: 'live' }],
      ['POST', `/api-keys/${k.id}/rotate`],
      ['POST', `/api-keys/${k.id}/revoke`],
      ['POST', `/api-keys/${k.id}/tier-request`, { tier: 'PRO' }],
      ['POST', '/security/mfa/enroll'],
      ['GET', '/developer-terms'],
      ['POST', '/developer-terms/accept', { version: '2026-07-17' }],
    ];
    for (const [method, path, json] of calls) {
      const res = await asKey(k.key, `${svc.api}${path}`, { method, json });
      expectError(res, 403, 'SESSION_REQUIRED');
      // A key that does not exist is no credential at all: 401, as anywhere else.
      const unknown = await asKey('svc_test_garbage0000000000000000000', `${svc.api}${path}`, {
        method,
        json,
      });
      expectError(unknown, 401, 'UNAUTHENTICATED');
    }
    // Nothing changed: the key is neither rotated nor revoked.
    expect((await meWithKey(svc, k.key)).status).toBe(200);
  });

  it("another user's key id is 404 NOT_FOUND for rotate, revoke and tier-request", async () => {
    const theirs = await createKey(svc, responder, { name: 'responder-key' });
    for (const [path, json] of [
      ['rotate', undefined],
      ['revoke', undefined],
      ['tier-request', { tier: 'PRO' }],
    ] as const) {
      for (const id of [theirs.id, 'key_doesnotexist', 'not-a-key-id']) {
        const err = expectError(
          await asSession(trader, `${svc.api}/api-keys/${id}/${path}`, { method: 'POST', json }),
          404,
          'NOT_FOUND',
        );
        expect(err.details).toEqual({ key_id: id });
      }
    }
    const me = await meWithKey(svc, theirs.key);
    expect(me.status).toBe(200);
    expect(me.body.credential.key_id).toBe(theirs.id);
    expect((await listKeys(svc, trader)).text).not.toContain(theirs.id);
  });

  it('tier-request is 202 PENDING; an admin session approves and the key tier changes', async () => {
    const k = await createKey(svc, trader, { name: 'wants-pro' });
    const req = await asSession(trader, `${svc.api}/api-keys/${k.id}/tier-request`, {
      method: 'POST',
      json: { tier: 'PRO', reason: 'backtesting' },
    });
    expect(req.status).toBe(202);
    expect(req.body).toMatchObject({
      id: expect.stringMatching(/^tier_/),
      key_id: k.id,
      tier: 'PRO',
      reason: 'backtesting',
      status: 'PENDING',
      decided_at: null,
    });
    expectError(
      await asSession(trader, `${svc.api}/api-keys/${k.id}/tier-request`, {
        method: 'POST',
        json: { tier: 'PLATINUM' },
      }),
      400,
      'VALIDATION_FAILED',
    );
    expect((await meWithKey(svc, k.key)).body.credential.tier).toBe('FREE');

    // A non-admin session cannot approve: the route needs admin:write, which only admins hold.
    const denied = expectError(
      await asSession(trader, `${svc.api}/admin/tier-requests/${req.body.id}/approve`, {
        method: 'POST',
      }),
      403,
      'INSUFFICIENT_SCOPE',
    );
    expect(denied.details.required_scopes).toEqual(['admin:write']);
    expectError(
      await asSession(trader, `${svc.api}/admin/tier-requests`),
      403,
      'INSUFFICIENT_SCOPE',
    );
    // An API key (even the admin's) cannot either.
    const adminKey = await createKey(svc, admin, { name: 'admin-reader' });
    expectError(
      await asKey(adminKey.key, `${svc.api}/admin/tier-requests/${req.body.id}/approve`, {
        method: 'POST',
      }),
      403,
      'SESSION_REQUIRED',
    );
    expect((await meWithKey(svc, k.key)).body.credential.tier).toBe('FREE');

    const pending = await asSession(admin, `${svc.api}/admin/tier-requests?status=PENDING`);
    expect(pending.status).toBe(200);
    expect(pending.body.data.map((t: { id: string }) => t.id)).toContain(req.body.id);

    const ok = await asSession(admin, `${svc.api}/admin/tier-requests/${req.body.id}/approve`, {
      method: 'POST',
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ id: req.body.id, status: 'APPROVED', tier: 'PRO' });
    expect(ok.body.decided_at).toBe('2026-11-22T12:00:00.000Z');
    expect((await meWithKey(svc, k.key)).body.credential.tier).toBe('PRO');
    expect((await asSession(trader, `${svc.api}/auth/me`)).body.credential.tier).toBe('PRO');
    const listed = (await listKeys(svc, trader)).body.data.find(
      (x: { id: string }) => x.id === k.id,
    );
    expect(listed.tier).toBe('PRO');

    expectError(
      await asSession(admin, `${svc.api}/admin/tier-requests/${req.body.id}/approve`, {
        method: 'POST',
      }),
      409,
      'TIER_REQUEST_NOT_PENDING',
    );
    const missing = expectError(
      await asSession(admin, `${svc.api}/admin/tier-requests/tier_nope/deny`, { method: 'POST' }),
      404,
      'NOT_FOUND',
    );
    expect(missing.details).toEqual({ tier_request_id: 'tier_nope' });
  });

  it('a denied tier request leaves the tier unchanged', async () => {
    const k = await createKey(svc, responder, { name: 'wants-enterprise' });
    const req = await asSession(responder, `${svc.api}/api-keys/${k.id}/tier-request`, {
      method: 'POST',
      json: { tier: 'ENTERPRISE' },
    });
    expect(req.status).toBe(202);
    const deny = await asSession(admin, `${svc.api}/admin/tier-requests/${req.body.id}/deny`, {
      method: 'POST',
    });
    expect(deny.status).toBe(200);
    expect(deny.body.status).toBe('DENIED');
    expect((await meWithKey(svc, k.key)).body.credential.tier).toBe('FREE');
  });
});

describe('API keys: expiry follows the service clock', () => {
  let svc: Running;
  beforeAll(async () => {
    svc = await startAccessApp();
  });
  afterAll(async () => {
    await svc.close();
  });

  it('an expires_in_days: 1 key works, then 1 day later is 401 API_KEY_EXPIRED', async () => {
    const session = await login(svc, TRADER);
    const k = await createKey(svc, session, { name: 'one-day', expires_in_days: 1 });
    expect(k.expires_at).toBe('2026-11-23T12:00:00.000Z');
    const clock = svc.clock as ManualClock;
    expect((await meWithKey(svc, k.key)).status).toBe(200);
    clock.advance(86_400_000 - 1000);
    expect((await meWithKey(svc, k.key)).status).toBe(200);
    clock.advance(1000);
    const err = expectError(await meWithKey(svc, k.key), 401, 'API_KEY_EXPIRED');
    expect(err.details).toMatchObject({ key_id: k.id, expired_at: '2026-11-23T12:00:00.000Z' });
    expect(JSON.stringify(err)).not.toContain(k.key);
    expectError(await asKey(k.key, `${svc.api}/markets`), 401, 'API_KEY_EXPIRED');
  });
});

/**
 * Every session request reads its user's active keys (for the tier), so one user cannot pile up
 * keys without bound: MAX_API_KEYS_PER_USER active (unrevoked, unexpired) keys at most.
 */
describe('API keys: at most MAX_API_KEYS_PER_USER active keys per user', () => {
  let svc: Running;
  beforeAll(async () => {
    svc = await startAccessApp({ env: { MAX_API_KEYS_PER_USER: '3' } });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('one more is 422 API_KEY_LIMIT_REACHED; revoked and expired keys do not count', async () => {
    const session = await login(svc, RESPONDER);
    const keys = [];
    keys.push(await createKey(svc, session, { expires_in_days: 1 }));
    for (let i = 0; i < 2; i++) keys.push(await createKey(svc, session));
    const refused = expectError(
      await createKeyRaw(svc, session, { name: 'one more', environment: 'live' }),
      422,
      'API_KEY_LIMIT_REACHED',
    );
    expect(refused.details).toEqual({ limit: 3, active: 3 });
    expect((await listKeys(svc, session)).body.data).toHaveLength(3); // nothing was created
    // A revoked key frees its place.
    const revoked = await asSession(session, `${svc.api}/api-keys/${keys[1].id}/revoke`, {
      method: 'POST',
    });
    expect(revoked.status).toBe(200);
    keys.push(await createKey(svc, session));
    expectError(
      await createKeyRaw(svc, session, { name: 'one more', environment: 'live' }),
      422,
      'API_KEY_LIMIT_REACHED',
    );
    // So does an expired one.
    (svc.clock as ManualClock).advance(2 * 86_400_000);
    const fresh = await login(svc, RESPONDER);
    expect(
      (await createKeyRaw(svc, fresh, { name: 'after expiry', environment: 'live' })).status,
    ).toBe(201);
    // The cap is per user: another user is unaffected.
    const other = await login(svc, TRADER);
    expect((await createKeyRaw(svc, other, { name: 'mine', environment: 'live' })).status).toBe(
      201,
    );
  });
  it('parallel creates at the cap cannot overshoot it: exactly the room left is created', async () => {
    const session = await login(svc, ADMIN);
    await createKey(svc, session); // one of three, so two are left
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        createKeyRaw(svc, session, { name: `parallel ${i}`, environment: 'live' }),
      ),
    );
    expect(answers.filter((r) => r.status === 201)).toHaveLength(2);
    const refused = answers.filter((r) => r.status !== 201);
    expect(refused).toHaveLength(8);
    for (const r of refused) {
      expect(expectError(r, 422, 'API_KEY_LIMIT_REACHED').details).toEqual({ limit: 3, active: 3 });
    }
    expect((await listKeys(svc, session)).body.data).toHaveLength(3);
  });
});
