import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  asKey,
  asSession,
  createKey,
  register,
  startAccessApp,
  verifiedAccount,
} from '../support/access.js';
import { expectContractError, http, type Running } from '../support/harness.js';
import { expectValidation } from '../support/orders.js';

/**
 * Usernames: generated ones show nothing of the email, none may pose as an account id, and only
 * a live world credential changes one.
 */
describe('usernames', () => {
  let svc: Running;
  const me = (token: string) => asSession(token, `${svc.api}/users/me`);
  const patch = (token: string, json: unknown) =>
    asSession(token, `${svc.api}/users/me`, { method: 'PATCH', json });

  beforeAll(async () => {
    svc = await startAccessApp();
  });
  afterAll(async () => {
    await svc.close();
  });

  it('a new account gets a neutral generated username with nothing of its email in it', async () => {
    const email = 'john.smith@corp.test';
    const signedUp = await register(svc, email);
    expect(signedUp.status).toBe(201);
    const name = signedUp.body.username as string;
    expect(name).toMatch(/^user_[0-9a-f]{8}$/);
    for (const part of ['john', 'smith', 'john_smith', 'corp']) expect(name).not.toContain(part);
    const shown = await http(`${svc.api}/users/${name}`);
    expect(shown.status).toBe(200);
    expect(JSON.stringify(shown.body)).not.toMatch(/john|smith|corp/);
  });

  it("a username starting with usr_ is 400 VALIDATION_FAILED, so none stands for another account's id", async () => {
    const owner = await verifiedAccount(svc, 'id-owner@usernames.test');
    const ownerId = (await me(owner)).body.id as string;
    expect(ownerId).toMatch(/^usr_/);
    const poser = await verifiedAccount(svc, 'poser@usernames.test');
    const before = (await me(poser)).body;
    for (const username of [ownerId, 'usr_anything']) {
      const err = expectValidation(
        await patch(poser, { username, display_name: 'Not applied' }),
        'username',
      );
      const fields = err.details.fields as { field: string; message?: string }[];
      expect(JSON.stringify(fields)).toContain('account ids');
    }
    expect((await me(poser)).body).toEqual(before);
    // The owner's id still finds the owner.
    expect((await http(`${svc.api}/users/${ownerId}`)).body.id).toBe(ownerId);
    // Other names with usr in them are fine.
    expect((await patch(poser, { username: 'user_usr_x' })).status).toBe(200);
  });

  it('a live key holding env:paper may not change the profile (403 TEST_KEY_LIVE_ENDPOINT)', async () => {
    const token = await verifiedAccount(svc, 'paper-live@usernames.test');
    const before = (await me(token)).body;
    const key = await createKey(svc, token, {
      environment: 'live',
      scopes: ['users:read', 'users:write', 'env:paper'],
      acknowledge_write_scopes: true,
    });
    expect(key.scopes).toContain('env:paper');
    const refused = await asKey(key.key, `${svc.api}/users/me`, {
      method: 'PATCH',
      json: { display_name: 'From a paper key' },
    });
    expectContractError(refused, 403, 'TEST_KEY_LIVE_ENDPOINT');
    expect((await asKey(key.key, `${svc.api}/users/me`)).body).toEqual(before);
    expect((await me(token)).body).toEqual(before);
  });
});
