import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { PLATFORM_DB } from '../../src/database/databases.js';
import { ApiKeyRepository } from '../../src/modules/api-keys/api-key.repository.js';
import { TierRequestEntity } from '../../src/modules/api-keys/entities/tier-request.entity.js';
import type { ManualClock } from '../../src/common/clock/clock.js';
import { expectError, http, startApp, type Running } from '../support/harness.js';
import { outbox } from '../support/access.js';
import { createKey, sessionFor } from '../support/keys.js';
import { until } from '../support/webhooks.js';

/**
 * One app for the cases that only add to it: each makes keys and tier requests of its own and
 * reads back only those (a pending list is searched, not counted), and a spy lasts one request.
 * The cases that move the clock or read every notification and mail of the seeded trader boot
 * their own.
 */
let shared: Running;
beforeAll(async () => {
  shared = await startApp();
});
afterAll(async () => {
  await shared.close();
});

describe('tier requests: admin review', () => {
  let svc: Running | undefined;
  afterEach(async () => {
    if (svc !== shared) await svc?.close();
    svc = undefined;
  });

  it('a non-admin is told INSUFFICIENT_SCOPE on every admin operation, verified or not (verifying grants no admin scope)', async () => {
    svc = shared;
    for (const email of ['unverified@sandbox.test', 'trader@sandbox.test']) {
      const headers = { authorization: `Bearer ${await sessionFor(svc.api, email)}` };
      for (const [method, path] of [
        ['GET', '/admin/tier-requests'],
        ['POST', '/admin/tier-requests/tier_nope/approve'],
        ['POST', '/admin/tier-requests/tier_nope/deny'],
      ]) {
        const res = await http(`${svc.api}${path}`, { method, headers });
        expect([email, method, path, res.status, res.body.error?.code]).toEqual([
          email,
          method,
          path,
          403,
          'INSUFFICIENT_SCOPE',
        ]);
      }
    }
  });

  it('approval changes the tier; a key revoked since the request cannot be approved, only denied', async () => {
    svc = shared;
    const token = await sessionFor(svc.api);
    const admin = await sessionFor(svc.api, 'admin@sandbox.test');
    const asUser = { authorization: `Bearer ${token}` };
    const asAdmin = { authorization: `Bearer ${admin}` };

    const kept = await createKey(svc.api, token);
    const req1 = await http(`${svc.api}/api-keys/${kept.id}/tier-request`, {
      method: 'POST',
      headers: asUser,
      json: { tier: 'PRO', reason: 'more traffic' },
    });
    expect(req1.status).toBe(202);
    expect(req1.body).toMatchObject({ key_id: kept.id, tier: 'PRO', status: 'PENDING' });
    const pending = await http(`${svc.api}/admin/tier-requests?status=PENDING`, {
      headers: asAdmin,
    });
    expect(pending.body.data.map((r: { id: string }) => r.id)).toContain(req1.body.id);
    const approved = await http(`${svc.api}/admin/tier-requests/${req1.body.id}/approve`, {
      method: 'POST',
      headers: asAdmin,
    });
    expect(approved.body.status).toBe('APPROVED');
    expect(
      (await http(`${svc.api}/auth/me`, { headers: { 'x-api-key': kept.key } })).body.credential
        .tier,
    ).toBe('PRO');
    expectError(
      await http(`${svc.api}/admin/tier-requests/${req1.body.id}/deny`, {
        method: 'POST',
        headers: asAdmin,
      }),
      409,
      'TIER_REQUEST_NOT_PENDING',
    );

    const gone = await createKey(svc.api, token);
    const req2 = await http(`${svc.api}/api-keys/${gone.id}/tier-request`, {
      method: 'POST',
      headers: asUser,
      json: { tier: 'ENTERPRISE' },
    });
    await http(`${svc.api}/api-keys/${gone.id}/revoke`, { method: 'POST', headers: asUser });
    expectError(
      await http(`${svc.api}/admin/tier-requests/${req2.body.id}/approve`, {
        method: 'POST',
        headers: asAdmin,
      }),
      409,
      'API_KEY_NOT_ACTIVE',
    );
    const denied = await http(`${svc.api}/admin/tier-requests/${req2.body.id}/deny`, {
      method: 'POST',
      headers: asAdmin,
    });
    expect(denied.body.status).toBe('DENIED');
    const list = await http(`${svc.api}/api-keys`, { headers: asUser });
    expect(list.body.data.find((k: { id: string }) => k.id === gone.id).tier).toBe('FREE');
  });

  it('an expired key is treated as a revoked one: no new request, no approval, no rotation', async () => {
    svc = await startApp();
    const short = await createKey(svc.api, await sessionFor(svc.api), { expires_in_days: 1 });
    const pending = await http(`${svc.api}/api-keys/${short.id}/tier-request`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await sessionFor(svc.api)}` },
      json: { tier: 'ENTERPRISE' },
    });
    expect(pending.status).toBe(202);
    (svc.clock as ManualClock).advance(2 * 86_400_000);
    // Fresh sessions (they last 12 hours) on the moved clock.
    const asUser = { authorization: `Bearer ${await sessionFor(svc.api)}` };
    const asAdmin = { authorization: `Bearer ${await sessionFor(svc.api, 'admin@sandbox.test')}` };

    const approve = expectError(
      await http(`${svc.api}/admin/tier-requests/${pending.body.id}/approve`, {
        method: 'POST',
        headers: asAdmin,
      }),
      409,
      'API_KEY_NOT_ACTIVE',
    );
    expect(approve.message).toContain('expired');
    expectError(
      await http(`${svc.api}/api-keys/${short.id}/tier-request`, {
        method: 'POST',
        headers: asUser,
        json: { tier: 'PRO' },
      }),
      409,
      'API_KEY_NOT_ACTIVE',
    );
    expectError(
      await http(`${svc.api}/api-keys/${short.id}/rotate`, { method: 'POST', headers: asUser }),
      409,
      'API_KEY_NOT_ACTIVE',
    );
    // Denying is still possible, and the key kept its tier.
    const denied = await http(`${svc.api}/admin/tier-requests/${pending.body.id}/deny`, {
      method: 'POST',
      headers: asAdmin,
    });
    expect(denied.body.status).toBe('DENIED');
    const list = await http(`${svc.api}/api-keys`, { headers: asUser });
    expect(list.body.data.find((k: { id: string }) => k.id === short.id).tier).toBe('FREE');
  });

  it('one request per key waits at a time, also against a racing request; the current tier is refused', async () => {
    svc = shared;
    const asUser = { authorization: `Bearer ${await sessionFor(svc.api)}` };
    const asAdmin = { authorization: `Bearer ${await sessionFor(svc.api, 'admin@sandbox.test')}` };
    const key = await createKey(svc.api, await sessionFor(svc.api));
    const ask = (tier: string) =>
      http(`${svc!.api}/api-keys/${key.id}/tier-request`, {
        method: 'POST',
        headers: asUser,
        json: { tier },
      });

    const same = expectError(await ask('FREE'), 409, 'TIER_UNCHANGED');
    expect(same.details).toMatchObject({ key_id: key.id, tier: 'FREE' });

    const racing = await Promise.all(
      Array.from({ length: 12 }, (_, i) => ask(i % 2 === 0 ? 'PRO' : 'ENTERPRISE')),
    );
    const accepted = racing.filter((r) => r.status === 202);
    expect(accepted).toHaveLength(1);
    const first = accepted[0].body as { id: string; tier: string };
    for (const r of racing.filter((x) => x.status !== 202)) {
      const e = expectError(r, 409, 'TIER_REQUEST_PENDING');
      expect(e.details).toEqual({ request_id: first.id, tier: first.tier });
    }
    const listed = await http(`${svc.api}/admin/tier-requests?status=PENDING`, {
      headers: asAdmin,
    });
    expect(
      listed.body.data
        .filter((r: { key_id: string }) => r.key_id === key.id)
        .map((r: { id: string }) => r.id),
    ).toEqual([first.id]);

    // A request that passed its check while another was inserted (forced here: the check finds
    // nothing once) meets the unique index and names the waiting request all the same.
    const ds = svc.app.get<DataSource>(getDataSourceToken(PLATFORM_DB), { strict: false });
    const spy = jest
      .spyOn(ds.getRepository(TierRequestEntity), 'findOneBy')
      .mockResolvedValueOnce(null);
    const late = expectError(await ask('ENTERPRISE'), 409, 'TIER_REQUEST_PENDING');
    expect(late.details).toEqual({ request_id: first.id, tier: first.tier });
    expect(spy).toHaveBeenCalledTimes(2);
    spy.mockRestore();

    // Once decided, the key may ask again.
    await http(`${svc.api}/admin/tier-requests/${first.id}/deny`, {
      method: 'POST',
      headers: asAdmin,
    });
    const again = await ask('PRO');
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({ key_id: key.id, tier: 'PRO', status: 'PENDING' });
  });
});

/**
 * Requests that read a key (or a tier request) before another changed it: forced here by handing
 * the handler the copy read before the change. Saving that whole stale copy used to write the
 * other request's change back (a revoked key came back to life).
 */
describe('key changes that race: the first change wins, a stale read changes nothing', () => {
  let svc: Running | undefined;
  afterEach(async () => {
    if (svc !== shared) await svc?.close();
    svc = undefined;
  });

  it('a rotation that read the key before it was revoked is 409 and the key stays revoked', async () => {
    svc = shared;
    const token = await sessionFor(svc.api);
    const asUser = { authorization: `Bearer ${token}` };
    const key = await createKey(svc.api, token);
    const repo = svc.app.get(ApiKeyRepository, { strict: false });
    const stale = await repo.repo.findOneByOrFail({ id: key.id });
    const revoked = await http(`${svc.api}/api-keys/${key.id}/revoke`, {
      method: 'POST',
      headers: asUser,
    });
    expect(revoked.status).toBe(200);
    const spy = jest.spyOn(repo.repo, 'findOneBy').mockResolvedValueOnce({ ...stale });
    const rotated = await http(`${svc.api}/api-keys/${key.id}/rotate`, {
      method: 'POST',
      headers: asUser,
    });
    spy.mockRestore();
    expect(rotated.text).not.toMatch(/svc_test_|svc_live_/);
    expect(expectError(rotated, 409, 'API_KEY_NOT_ACTIVE').message).toMatch(/meanwhile/);
    const row = await repo.repo.findOneByOrFail({ id: key.id });
    expect(row.revokedAt).not.toBeNull();
    expect(row.secretHash).toBe(stale.secretHash);
    expectError(
      await http(`${svc.api}/auth/me`, { headers: { 'x-api-key': key.key } }),
      401,
      'API_KEY_REVOKED',
    );
  });

  it('an approval that read the request before another admin decided it is 409 and changes nothing', async () => {
    svc = shared;
    const token = await sessionFor(svc.api);
    const admin = await sessionFor(svc.api, 'admin@sandbox.test');
    const asAdmin = { authorization: `Bearer ${admin}` };
    const key = await createKey(svc.api, token);
    const asked = await http(`${svc.api}/api-keys/${key.id}/tier-request`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      json: { tier: 'PRO', reason: 'more traffic' },
    });
    const ds = svc.app.get<DataSource>(getDataSourceToken(PLATFORM_DB), { strict: false });
    const requests = ds.getRepository(TierRequestEntity);
    const stale = await requests.findOneByOrFail({ id: asked.body.id });
    const denied = await http(`${svc.api}/admin/tier-requests/${asked.body.id}/deny`, {
      method: 'POST',
      headers: asAdmin,
    });
    expect(denied.body.status).toBe('DENIED');
    const spy = jest.spyOn(requests, 'findOneBy').mockResolvedValueOnce({ ...stale });
    const approved = await http(`${svc.api}/admin/tier-requests/${asked.body.id}/approve`, {
      method: 'POST',
      headers: asAdmin,
    });
    spy.mockRestore();
    expect(expectError(approved, 409, 'TIER_REQUEST_NOT_PENDING').message).toMatch(/DENIED/);
    expect((await requests.findOneByOrFail({ id: asked.body.id })).status).toBe('DENIED');
    const keys = await http(`${svc.api}/api-keys`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(keys.body.data.find((k: { id: string }) => k.id === key.id).tier).toBe('FREE');
  });

  it('an approval that read the key before it was revoked is 409; the request waits, to be denied', async () => {
    svc = shared;
    const token = await sessionFor(svc.api);
    const admin = await sessionFor(svc.api, 'admin@sandbox.test');
    const asUser = { authorization: `Bearer ${token}` };
    const key = await createKey(svc.api, token);
    const asked = await http(`${svc.api}/api-keys/${key.id}/tier-request`, {
      method: 'POST',
      headers: asUser,
      json: { tier: 'PRO', reason: 'more traffic' },
    });
    const keys = svc.app.get(ApiKeyRepository, { strict: false });
    const stale = await keys.repo.findOneByOrFail({ id: key.id });
    await http(`${svc.api}/api-keys/${key.id}/revoke`, { method: 'POST', headers: asUser });
    const spy = jest.spyOn(keys.repo, 'findOneBy').mockResolvedValueOnce({ ...stale });
    const approved = await http(`${svc.api}/admin/tier-requests/${asked.body.id}/approve`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}` },
    });
    spy.mockRestore();
    expectError(approved, 409, 'API_KEY_NOT_ACTIVE');
    const ds = svc.app.get<DataSource>(getDataSourceToken(PLATFORM_DB), { strict: false });
    const row = await ds.getRepository(TierRequestEntity).findOneByOrFail({ id: asked.body.id });
    expect(row.status).toBe('PENDING');
    expect((await keys.repo.findOneByOrFail({ id: key.id })).tier).toBe('FREE');
  });

  it('the requester is told the decision: an in-app notification and an email, prefix only', async () => {
    svc = await startApp();
    const token = await sessionFor(svc.api);
    const admin = await sessionFor(svc.api, 'admin@sandbox.test');
    const asUser = { authorization: `Bearer ${token}` };
    const key = await createKey(svc.api, token);
    const ask = (tier: string) =>
      http(`${svc!.api}/api-keys/${key.id}/tier-request`, {
        method: 'POST',
        headers: asUser,
        json: { tier, reason: 'more traffic' },
      });
    const decide = (id: string, verb: 'approve' | 'deny') =>
      http(`${svc!.api}/admin/tier-requests/${id}/${verb}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${admin}` },
      });
    const denied = await ask('ENTERPRISE');
    expect((await decide(denied.body.id, 'deny')).status).toBe(200);
    const approved = await ask('PRO');
    expect((await decide(approved.body.id, 'approve')).status).toBe(200);
    // The key is a test key: the notifications are in its (paper) world, where a test key reads
    // them; the session reads the live world, which has none.
    const inbox = await http(`${svc.api}/notifications/cursor`, {
      headers: { 'x-api-key': key.key },
    });
    expect(inbox.body.data.map((n: { type: string; data: unknown }) => [n.type, n.data])).toEqual([
      ['TIER_REQUEST_APPROVED', { request_id: approved.body.id, key_id: key.id, tier: 'PRO' }],
      ['TIER_REQUEST_DENIED', { request_id: denied.body.id, key_id: key.id, tier: 'ENTERPRISE' }],
    ]);
    expect((await http(`${svc.api}/notifications/cursor`, { headers: asUser })).body.data).toEqual(
      [],
    );
    await until(
      () => outbox(svc!, 'trader@sandbox.test').filter((m) => m.kind.startsWith('TIER_REQUEST_')),
      (mails) => mails.length === 2,
    );
    const mails = outbox(svc, 'trader@sandbox.test').filter((m) => m.kind.startsWith('TIER_'));
    expect(mails.map((m) => m.kind).sort()).toEqual([
      'TIER_REQUEST_APPROVED',
      'TIER_REQUEST_DENIED',
    ]);
    for (const m of mails) expect(m.body).not.toContain(key.key);
  });
});
