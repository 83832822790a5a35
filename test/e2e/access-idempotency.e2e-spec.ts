import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import type { ManualClock } from '../../src/common/clock/clock.js';
import {
  asSession,
  createKeyRaw,
  login,
  outbox,
  startAccessApp,
  verifiedAccount,
} from '../support/access.js';
import { expectError, rawRequest, type Running } from '../support/harness.js';
import { openDatabaseOf } from '../support/test-database.js';

describe('Idempotency-Key on mutations', () => {
  let svc: Running;
  let alice: string;
  let bob: string;
  const keysOf = async (token: string) =>
    (await asSession(token, `${svc.api}/api-keys?limit=200`)).body.data as { name: string }[];
  const creationMails = (email: string) =>
    outbox(svc, email).filter((m) => m.kind === 'API_KEY_CREATED');

  beforeAll(async () => {
    svc = await startAccessApp();
    alice = await verifiedAccount(svc, 'alice@example.com');
    bob = await verifiedAccount(svc, 'bob@example.com');
  });
  afterAll(async () => {
    await svc.close();
  });

  it('same key + same request: same status and body, Idempotent-Replayed: true, no second effect', async () => {
    const body = { name: 'idem-1', environment: 'live' };
    const first = await createKeyRaw(svc, alice, body, { 'idempotency-key': 'create-1' });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const second = await createKeyRaw(svc, alice, body, { 'idempotency-key': 'create-1' });
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.text).toBe(first.text);
    expect(second.headers.get('content-type')).toContain('application/json');
    // One key, one creation mail.
    expect((await keysOf(alice)).filter((k) => k.name === 'idem-1')).toHaveLength(1);
    expect(creationMails('alice@example.com')).toHaveLength(1);
    // The replayed key is the one created: it works.
    const me = await asSession(alice, `${svc.api}/auth/me`);
    expect(me.status).toBe(200);
    const viaKey = await fetch(`${svc.api}/auth/me`, { headers: { 'x-api-key': second.body.key } });
    expect(viaKey.status).toBe(200);
    // The stored answer holds the full key, so it is kept sealed, never in clear.
    const db = openDatabaseOf(svc.dataDir, 'platform', { readonly: true });
    const row = db
      .prepare(
        "SELECT state, response_status, response_body FROM idempotency_records WHERE idem_key = 'create-1'",
      )
      .get() as { state: string; response_status: number; response_body: string };
    db.close();
    expect(row.state).toBe('DONE');
    expect(row.response_status).toBe(201);
    expect(row.response_body).toMatch(/^v1\./);
    expect(row.response_body).not.toContain(second.body.key);
  });

  it('same key + different request is 422 IDEMPOTENCY_KEY_REUSED with no effect', async () => {
    const res = await createKeyRaw(
      svc,
      alice,
      { name: 'idem-1-changed', environment: 'live' },
      { 'idempotency-key': 'create-1' },
    );
    const err = expectError(res, 422, 'IDEMPOTENCY_KEY_REUSED');
    expect(err.details.idempotency_key).toBe('create-1');
    // Another path under the same key is a different request too.
    const rotate = await asSession(alice, `${svc.api}/api-keys/key_nope/rotate`, {
      method: 'POST',
      headers: { 'idempotency-key': 'create-1' },
    });
    expectError(rotate, 422, 'IDEMPOTENCY_KEY_REUSED');
    expect((await keysOf(alice)).map((k) => k.name)).not.toContain('idem-1-changed');
    expect(creationMails('alice@example.com')).toHaveLength(1);
  });

  it('keys are scoped per owner: another user may use the same Idempotency-Key', async () => {
    const res = await createKeyRaw(
      svc,
      bob,
      { name: 'idem-1', environment: 'live' },
      { 'idempotency-key': 'create-1' },
    );
    expect(res.status).toBe(201);
    expect(res.headers.get('idempotent-replayed')).toBeNull();
    expect((await keysOf(bob)).map((k) => k.name)).toEqual(['idem-1']);
    expect(creationMails('bob@example.com')).toHaveLength(1);
    expect(creationMails('alice@example.com')).toHaveLength(1);
  });

  it('business errors are stored and replayed like successes', async () => {
    const body = { name: 'w', environment: 'live', scopes: ['orders:write'] };
    const first = await createKeyRaw(svc, alice, body, { 'idempotency-key': 'unacked' });
    expectError(first, 422, 'WRITE_SCOPES_NOT_ACKNOWLEDGED');
    const again = await createKeyRaw(svc, alice, body, { 'idempotency-key': 'unacked' });
    expect(again.status).toBe(422);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    // The same error, carrying this request's id (as every error body does); the first
    // request's id is in Idempotent-Original-Request-Id.
    const replayed = expectError(again, 422, 'WRITE_SCOPES_NOT_ACKNOWLEDGED');
    expect({ ...replayed, request_id: first.body.error.request_id }).toEqual(first.body.error);
    expect(again.headers.get('idempotent-original-request-id')).toBe(first.body.error.request_id);
  });

  it('an invalid Idempotency-Key is 400 VALIDATION_FAILED; GETs ignore the header', async () => {
    const res = await createKeyRaw(
      svc,
      alice,
      { name: 'x', environment: 'live' },
      { 'idempotency-key': 'k'.repeat(256) },
    );
    const err = expectError(res, 400, 'VALIDATION_FAILED');
    expect(err.details.fields[0].field).toBe('Idempotency-Key');
    // A tab or a non-ASCII character is refused too; spaces inside are printable ASCII.
    for (const bad of ['a\tb', 'cl\u00e9']) {
      const refused = await createKeyRaw(
        svc,
        alice,
        { name: 'x', environment: 'live' },
        { 'idempotency-key': bad },
      );
      expect(expectError(refused, 400, 'VALIDATION_FAILED').details.fields[0].field).toBe(
        'Idempotency-Key',
      );
    }
    const spaced = () =>
      createKeyRaw(
        svc,
        alice,
        { name: 'spaced', environment: 'live' },
        { 'idempotency-key': 'retry 1 of 3' },
      );
    const first = await spaced();
    expect(first.status).toBe(201);
    const again = await spaced();
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.id).toBe(first.body.id);
    // Two Idempotency-Key header lines are refused (Node would hand them over joined, "k1, k2").
    const body = JSON.stringify({ name: 'twice', environment: 'live' });
    const twice = await rawRequest(
      svc.baseUrl,
      `POST /api/v1/api-keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${alice}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Idempotency-Key: k1\r\nIdempotency-Key: k2\r\nConnection: close\r\n\r\n${body}`,
    );
    expect(twice.status).toBe(400);
    expect(JSON.parse(twice.body).error).toMatchObject({
      code: 'VALIDATION_FAILED',
      details: {
        fields: [
          { field: 'Idempotency-Key', message: 'Idempotency-Key must be given at most once' },
        ],
      },
    });
    expect((await keysOf(alice)).map((k) => k.name)).not.toContain('twice');
    const get = await asSession(alice, `${svc.api}/api-keys`, {
      headers: { 'idempotency-key': 'create-1' },
    });
    expect(get.status).toBe(200);
    expect(get.headers.get('idempotent-replayed')).toBeNull();
  });

  it('409 IDEMPOTENCY_KEY_IN_USE while the first request is still running (a RUNNING record)', async () => {
    // A request that is still running is a RUNNING row in idempotency_records. One is planted
    // here for Alice's exact request (same fingerprint: method, path and raw body).
    const me = await asSession(alice, `${svc.api}/auth/me`);
    const body = JSON.stringify({ name: 'slow', environment: 'live' });
    const fingerprint = createHash('sha256')
      .update('POST /api/v1/api-keys\n')
      .update(Buffer.from(body))
      .digest('hex');
    const now = svc.clock.now();
    const db = openDatabaseOf(svc.dataDir, 'platform');
    db.prepare(
      `INSERT INTO idempotency_records (owner_id, idem_key, fingerprint, state, created_at, expires_at)
       VALUES (?, ?, ?, 'RUNNING', ?, ?)`,
    ).run(
      // Records are scoped per environment and owner; a session works on the live engine.
      `live:${me.body.user.id}`,
      'in-flight',
      fingerprint,
      new Date(now).toISOString(),
      new Date(now + 86_400_000).toISOString(),
    );
    db.close();
    const res = await asSession(alice, `${svc.api}/api-keys`, {
      method: 'POST',
      headers: { 'idempotency-key': 'in-flight', 'content-type': 'application/json' },
      body,
    });
    const err = expectError(res, 409, 'IDEMPOTENCY_KEY_IN_USE');
    expect(err.details.idempotency_key).toBe('in-flight');
    expect((await keysOf(alice)).map((k) => k.name)).not.toContain('slow');
    // A different request under the running key is still a reuse.
    expectError(
      await createKeyRaw(
        svc,
        alice,
        { name: 'other', environment: 'live' },
        {
          'idempotency-key': 'in-flight',
        },
      ),
      422,
      'IDEMPOTENCY_KEY_REUSED',
    );
    // Bob's identical request under the same key is his own: it runs.
    const bobs = await asSession(bob, `${svc.api}/api-keys`, {
      method: 'POST',
      headers: { 'idempotency-key': 'in-flight', 'content-type': 'application/json' },
      body,
    });
    expect(bobs.status).toBe(201);
  });

  it('after 24 hours the same Idempotency-Key runs a new request', async () => {
    (svc.clock as ManualClock).advance(24 * 3600 * 1000);
    // The 12-hour sessions have expired meanwhile.
    const fresh = await login(svc, 'alice@example.com', 'correct-horse-battery');
    const res = await createKeyRaw(
      svc,
      fresh,
      { name: 'idem-1-next-day', environment: 'live' },
      { 'idempotency-key': 'create-1' },
    );
    expect(res.status).toBe(201);
    expect(res.headers.get('idempotent-replayed')).toBeNull();
    // And the original request under that key now runs again too (a new key).
    const again = await createKeyRaw(
      svc,
      fresh,
      { name: 'idem-1-next-day', environment: 'live' },
      { 'idempotency-key': 'create-1' },
    );
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await keysOf(fresh)).filter((k) => k.name === 'idem-1-next-day')).toHaveLength(1);
  });
});
