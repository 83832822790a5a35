import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { totpAt } from '../../src/common/crypto/totp.js';
import type { UserEntity } from '../../src/modules/users/entities/user.entity.js';
import { UsersService } from '../../src/modules/users/users.service.js';
import { asSession, startAccessApp, verifiedAccount } from '../support/access.js';
import type { JsonResponse, Running } from '../support/harness.js';

/**
 * MFA enrol and step-up read the account, then write it a few awaits later: a profile change
 * made in between must survive them, and a username given up in between and taken by another
 * account must not make them fail.
 */
describe('MFA writes leave a profile changed meanwhile alone', () => {
  let svc: Running;
  let n = 0;
  const me = (token: string) => asSession(token, `${svc.api}/users/me`);
  const patch = (token: string, json: unknown) =>
    asSession(token, `${svc.api}/users/me`, { method: 'PATCH', json });
  const enrol = (token: string) =>
    asSession(token, `${svc.api}/security/mfa/enroll`, { method: 'POST' });
  const stepUp = (token: string, code: string) =>
    asSession(token, `${svc.api}/security/mfa/step-up`, { method: 'POST', json: { code } });
  const codeOf = (enrolled: JsonResponse): string =>
    totpAt(enrolled.body.secret as string, Math.floor(svc.clock.nowSeconds() / 30));

  beforeAll(async () => {
    svc = await startAccessApp({ now: '2026-11-22T12:00:10.000Z' });
  });
  afterAll(async () => {
    await svc.close();
  });

  /**
   * Runs `call` with `meanwhile` done between MFA's read of the account and its write (its read
   * answers only after `meanwhile`, with the account as it was): the moment a concurrent PATCH
   * /users/me could land.
   */
  const withChangeAfterRead = async (
    meanwhile: () => Promise<void>,
    call: () => Promise<JsonResponse>,
  ): Promise<JsonResponse> => {
    const users = svc.app.get(UsersService);
    const original = users.byId.bind(users);
    let armed = true;
    users.byId = async (id: string): Promise<UserEntity | null> => {
      // MFA's own read (the request's authentication reads the account too, before it).
      const mine = new Error().stack?.includes('MfaService.') === true;
      const read = await original(id);
      if (armed && mine) {
        armed = false;
        await meanwhile();
      }
      return read;
    };
    try {
      return await call();
    } finally {
      users.byId = original;
    }
  };

  /** A fresh account, its old username, and a second account that takes that username later. */
  const accounts = async () => {
    const token = await verifiedAccount(svc, `mfa-profile${++n}@mfa.test`);
    const rival = await verifiedAccount(svc, `mfa-rival${n}@mfa.test`);
    const oldName = (await me(token)).body.username as string;
    const meanwhile = async () => {
      const moved = await patch(token, {
        username: `renamed_${n}`,
        display_name: 'Changed meanwhile',
        bio: 'New bio',
        profile_visibility: 'PRIVATE',
      });
      expect(moved.status).toBe(200);
      expect((await patch(rival, { username: oldName })).status).toBe(200);
    };
    const expected = {
      username: `renamed_${n}`,
      display_name: 'Changed meanwhile',
      bio: 'New bio',
      profile_visibility: 'PRIVATE',
    };
    return { token, meanwhile, expected };
  };

  it('re-enrolment keeps the profile change (and does not answer 500 for the username given up)', async () => {
    const { token, meanwhile, expected } = await accounts();
    // Replacing an enrolled seed takes a step-up with it first.
    const first = await enrol(token);
    expect(first.status).toBe(201);
    expect((await stepUp(token, codeOf(first))).status).toBe(200);
    const again = await withChangeAfterRead(meanwhile, () => enrol(token));
    expect(again.status).toBe(201);
    expect((await me(token)).body).toMatchObject(expected);
  });

  it('step-up keeps the profile change (and does not answer 500 for the username given up)', async () => {
    const { token, meanwhile, expected } = await accounts();
    const enrolled = await enrol(token);
    expect(enrolled.status).toBe(201);
    const stepped = await withChangeAfterRead(meanwhile, () => stepUp(token, codeOf(enrolled)));
    expect(stepped.status).toBe(200);
    expect((await me(token)).body).toMatchObject(expected);
  });
});
