import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { connectionOf, PLATFORM_DB } from '../../src/database/databases.js';
import { ApiKeyRepository } from '../../src/modules/api-keys/api-key.repository.js';
import { ApiKeysService } from '../../src/modules/api-keys/api-keys.service.js';
import {
  NotificationsService,
  type CreatedNotification,
} from '../../src/modules/notifications/notifications.service.js';
import { DomainError } from '../../src/common/errors/domain-error.js';
import { http, startApp, type Running } from '../support/harness.js';
import { createKey, sessionFor } from '../support/keys.js';

/**
 * A tier decision holds no platform transaction open across an await: a notification written
 * meanwhile on the same connection (a MARKET_RESOLVED from a bus listener, a COMMENT_REPLY) is its
 * own, and stays stored once announced even when the decision fails and rolls back.
 */
describe('tier decision: its transaction takes no other write with it', () => {
  let svc: Running | undefined;
  afterEach(async () => {
    await svc?.close();
    svc = undefined;
  });

  it('a notification announced while a failing approval runs is kept', async () => {
    svc = await startApp();
    const token = await sessionFor(svc.api);
    const adminToken = await sessionFor(svc.api, 'admin@sandbox.test');
    const asUser = { authorization: `Bearer ${token}` };
    const me = await http(`${svc.api}/auth/me`, { headers: asUser });
    const admin = await http(`${svc.api}/auth/me`, {
      headers: { authorization: `Bearer ${adminToken}` },
    });
    const key = await createKey(svc.api, token, { environment: 'live' });
    const asked = await http(`${svc.api}/api-keys/${key.id}/tier-request`, {
      method: 'POST',
      headers: asUser,
      json: { tier: 'PRO', reason: 'more traffic' },
    });
    expect(asked.status).toBe(202);
    // The approval reads the key before it is revoked, so it fails when it writes.
    const keys = svc.app.get(ApiKeyRepository, { strict: false });
    const stale = await keys.repo.findOneByOrFail({ id: key.id });
    await http(`${svc.api}/api-keys/${key.id}/revoke`, { method: 'POST', headers: asUser });
    const spy = jest.spyOn(keys.repo, 'findOneBy').mockResolvedValueOnce({ ...stale });

    const notifications = svc.app.get(NotificationsService, { strict: false });
    const announced: CreatedNotification[] = [];
    const sub = notifications.created.subscribe((c) => announced.push(c));
    const db = connectionOf(
      svc.app.get<DataSource>(getDataSourceToken(PLATFORM_DB), { strict: false }),
    );
    const service = svc.app.get(ApiKeysService, { strict: false });
    const credential = {
      type: 'SESSION' as const,
      userId: admin.body.user.id as string,
      keyId: null,
      environment: 'live' as const,
      world: 'live' as const,
      scopes: [],
      tier: 'FREE' as const,
    };
    let settled = false;
    let sawOpenTransaction = false;
    // Its outcome, taken at once: a rejection waiting for a handler while the loop below lets I/O
    // run would be reported as unhandled.
    const decision = service
      .decideTier(credential, asked.body.id as string, true)
      .then(
        () => undefined,
        (err: unknown) => err,
      )
      .finally(() => {
        settled = true;
      });
    // Another write, as a bus listener would make it: at the first turn the connection is inside
    // a transaction, or once the decision is over.
    let written = false;
    let turns = 0;
    while (!written) {
      sawOpenTransaction ||= db.inTransaction;
      if (db.inTransaction || settled) {
        notifications.notify({
          userId: me.body.user.id as string,
          environment: 'live',
          type: 'MARKET_RESOLVED',
          title: 'Market resolved YES',
          body: 'written while a tier decision ran',
          data: {},
        });
        written = true;
      }
      // Turn by turn of the microtask queue, where SQLite's queries resolve; every 100th turn
      // also lets I/O run (PostgreSQL's replies arrive as I/O: a loop of microtasks alone
      // starved them, and the decision never settled).
      await (++turns % 100 === 0 ? new Promise((r) => setImmediate(r)) : Promise.resolve());
    }
    const failure = await decision;
    spy.mockRestore();
    sub.unsubscribe();
    expect(failure).toBeInstanceOf(DomainError);
    expect((failure as DomainError).code).toBe('API_KEY_NOT_ACTIVE');
    expect(announced).toHaveLength(1);
    const stored = db
      .prepare('SELECT id FROM notifications WHERE user_id = ?')
      .all(me.body.user.id as string) as { id: string }[];
    expect(stored.map((r) => r.id)).toEqual([announced[0].notification.id]);
    expect(sawOpenTransaction).toBe(false);
  });
});
