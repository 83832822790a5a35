import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { USERNAME_PATTERN } from '../../src/modules/users/username.js';
import { UsersService } from '../../src/modules/users/users.service.js';
import {
  asKey,
  asSession,
  createKey,
  register,
  startAccessApp,
  TRADER,
  login,
  verifiedAccount,
} from '../support/access.js';
import { expectContractError, http, type JsonResponse, type Running } from '../support/harness.js';
import { expectValidation } from '../support/orders.js';
import { platformQuery } from '../support/webhooks.js';

const OWN_KEYS = [
  'avatar_url',
  'bio',
  'created_at',
  'display_name',
  'email',
  'email_verified',
  'id',
  'profile_visibility',
  'roles',
  'username',
];
const PUBLIC_KEYS = ['avatar_url', 'bio', 'created_at', 'display_name', 'id', 'username'];

/**
 * Profiles: GET/PATCH /users/me and the public GET /users/{id_or_username}. The profile belongs
 * to the account: a test key reads it, only a live key or a session changes it.
 */
describe('users and profiles', () => {
  let svc: Running;
  let n = 0;
  const fresh = () => verifiedAccount(svc, `user${++n}@profiles.test`);
  const me = (token: string) => asSession(token, `${svc.api}/users/me`);
  const patch = (token: string, json: unknown) =>
    asSession(token, `${svc.api}/users/me`, { method: 'PATCH', json });
  const profile = (idOrName: string, init: RequestInit = {}) =>
    http(`${svc.api}/users/${encodeURIComponent(idOrName)}`, init);

  beforeAll(async () => {
    svc = await startAccessApp();
  });
  afterAll(async () => {
    await svc.close();
  });

  it('GET /users/me: the account and its profile, the same for a session and a test key', async () => {
    const token = await login(svc, TRADER);
    const own = await me(token);
    expect(own.status).toBe(200);
    expect(Object.keys(own.body).sort()).toEqual(OWN_KEYS);
    expect(own.body).toMatchObject({
      id: expect.stringMatching(/^usr_/),
      email: TRADER,
      email_verified: true,
      username: expect.stringMatching(USERNAME_PATTERN),
      display_name: null,
      bio: null,
      avatar_url: null,
      profile_visibility: 'PUBLIC',
      roles: ['CREATOR'], // the seeded trader creates live markets
    });
    // Generated, and nothing of the email (public profiles never show it).
    expect(own.body.username).toMatch(/^user_[0-9a-f]{8}$/);
    expect(own.body.username).not.toContain(TRADER.split('@')[0]);
    // /auth/me names the same username (additive there).
    const authMe = await asSession(token, `${svc.api}/auth/me`);
    expect(authMe.body.user.username).toBe(own.body.username);
    const testKey = await createKey(svc, token, { environment: 'test', scopes: ['users:read'] });
    const viaKey = await asKey(testKey.key, `${svc.api}/users/me`);
    expect(viaKey.status).toBe(200);
    expect(viaKey.body).toEqual(own.body);
    const noScope = await createKey(svc, token, { environment: 'test', scopes: ['markets:read'] });
    const refused = expectContractError(
      await asKey(noScope.key, `${svc.api}/users/me`),
      403,
      'INSUFFICIENT_SCOPE',
    );
    expect(refused.details.required_scopes).toEqual(['users:read']);
    expectContractError(await http(`${svc.api}/users/me`), 401, 'UNAUTHENTICATED');
  });

  it('PATCH /users/me sets every field; text comes back exactly as sent; null clears', async () => {
    const token = await fresh();
    const before = (await me(token)).body;
    const body = {
      username: 'ada_lovelace_1815',
      display_name: 'Ada <b>Lovelace</b> & "co" 🚀',
      bio: 'Line one\n\tLine two <script>alert(1)</script> — é',
      avatar_url: 'https://cdn.example.com/a/ada.png?size=128',
      profile_visibility: 'PUBLIC',
    };
    const res = await patch(token, body);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...before, ...body });
    expect((await me(token)).body).toEqual(res.body);
    // The public profile, by id and by username in any case: the public fields only.
    for (const key of [before.id, 'ada_lovelace_1815', 'ADA_Lovelace_1815']) {
      const pub = await profile(key);
      expect(pub.status).toBe(200);
      expect(Object.keys(pub.body).sort()).toEqual(PUBLIC_KEYS);
      expect(pub.body).toEqual({
        id: before.id,
        username: body.username,
        display_name: body.display_name,
        bio: body.bio,
        avatar_url: body.avatar_url,
        created_at: before.created_at,
      });
    }
    // An empty body changes nothing; null clears the three clearable fields only.
    expect((await patch(token, {})).body).toEqual(res.body);
    const cleared = await patch(token, { display_name: null, bio: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({
      display_name: null,
      bio: null,
      avatar_url: body.avatar_url,
      username: body.username,
    });
    expect((await patch(token, { avatar_url: null })).body.avatar_url).toBeNull();
    // An empty bio is a bio (stored as sent), not a refusal.
    expect((await patch(token, { bio: '' })).body.bio).toBe('');
    const stored = platformQuery<{ display_name: string | null; bio: string | null }>(
      svc,
      'SELECT display_name, bio FROM users WHERE id = ?',
      before.id,
    );
    expect(stored).toEqual([{ display_name: null, bio: '' }]);
  });

  it('a test key may not change the profile (403 TEST_KEY_LIVE_ENDPOINT); a live key with users:write may', async () => {
    const token = await fresh();
    const before = (await me(token)).body;
    const writeScopes = { scopes: ['users:read', 'users:write'], acknowledge_write_scopes: true };
    const testKey = await createKey(svc, token, { environment: 'test', ...writeScopes });
    const refused = await asKey(testKey.key, `${svc.api}/users/me`, {
      method: 'PATCH',
      json: { display_name: 'From a test key' },
    });
    expectContractError(refused, 403, 'TEST_KEY_LIVE_ENDPOINT');
    const readOnly = await createKey(svc, token, { environment: 'live', scopes: ['users:read'] });
    const noScope = await asKey(readOnly.key, `${svc.api}/users/me`, {
      method: 'PATCH',
      json: { display_name: 'Without users:write' },
    });
    expect(expectContractError(noScope, 403, 'INSUFFICIENT_SCOPE').details.required_scopes).toEqual(
      ['users:write'],
    );
    expectContractError(
      await http(`${svc.api}/users/me`, { method: 'PATCH', json: { display_name: 'Nobody' } }),
      401,
      'UNAUTHENTICATED',
    );
    expect((await me(token)).body).toEqual(before);
    const liveKey = await createKey(svc, token, { environment: 'live', ...writeScopes });
    const ok = await asKey(liveKey.key, `${svc.api}/users/me`, {
      method: 'PATCH',
      json: { display_name: 'From a live key' },
    });
    expect(ok.status).toBe(200);
    // The test key reads what the live key wrote: one profile per account.
    const read = await asKey(testKey.key, `${svc.api}/users/me`);
    expect(read.body.display_name).toBe('From a live key');
  });

  it('refuses bad input with 400 VALIDATION_FAILED naming the field, and changes nothing', async () => {
    const token = await fresh();
    const before = (await me(token)).body;
    const cases: [Record<string, unknown>, string][] = [
      [{ username: 'Upper_Case' }, 'username'],
      [{ username: 'ab' }, 'username'],
      [{ username: 'a'.repeat(31) }, 'username'],
      [{ username: 'with-dash' }, 'username'],
      [{ username: 'with space' }, 'username'],
      [{ username: '' }, 'username'],
      [{ username: 12345 }, 'username'],
      [{ username: null }, 'username'],
      [{ display_name: '' }, 'display_name'],
      [{ display_name: 'x'.repeat(51) }, 'display_name'],
      [{ display_name: '\u200b\u200b' }, 'display_name'],
      [{ display_name: '   ' }, 'display_name'],
      [{ display_name: 'nul\u0000byte' }, 'display_name'],
      [{ display_name: 'esc\u001b[31m' }, 'display_name'],
      [{ display_name: 'two\nlines' }, 'display_name'],
      [{ display_name: 'abc\u202egnp.exe' }, 'display_name'],
      [{ display_name: 'two\u2028lines' }, 'display_name'],
      [{ display_name: '\ufeffAda' }, 'display_name'],
      [{ display_name: 42 }, 'display_name'],
      [{ bio: 'x'.repeat(501) }, 'bio'],
      [{ bio: '\u200b\u200b' }, 'bio'],
      [{ bio: 'bell\u0007' }, 'bio'],
      [{ bio: 'isolate\u2066x\u2069' }, 'bio'],
      [{ bio: false }, 'bio'],
      [{ avatar_url: 'http://cdn.example.com/a.png' }, 'avatar_url'],
      [{ avatar_url: 'javascript:alert(1)' }, 'avatar_url'],
      [{ avatar_url: 'data:image/png;base64,iVBORw0KGgo=' }, 'avatar_url'],
      [{ avatar_url: 'https://user:secret@cdn.example.com/a.png' }, 'avatar_url'],
      [{ avatar_url: `https://cdn.example.com/${'a'.repeat(480)}.png` }, 'avatar_url'],
      [{ avatar_url: 'not a url' }, 'avatar_url'],
      [{ avatar_url: 7 }, 'avatar_url'],
      [{ profile_visibility: 'public' }, 'profile_visibility'],
      [{ profile_visibility: 'HIDDEN' }, 'profile_visibility'],
      [{ profile_visibility: null }, 'profile_visibility'],
      [{ email: 'other@profiles.test' }, 'email'],
      [{ roles: ['ADMIN'] }, 'roles'],
      // All or nothing: the valid fields of a refused body are not applied either.
      [{ username: 'all_or_nothing', display_name: 'Fine', bio: '\u202e' }, 'bio'],
      [{ display_name: 'Fine', avatar_url: 'http://x.example.com/a.png' }, 'avatar_url'],
    ];
    for (const [body, field] of cases) {
      const res = await patch(token, body);
      try {
        const err = expectValidation(res, field);
        expect(err.details.fields.map((f: { field: string }) => f.field)).toEqual([field]);
      } catch (e) {
        throw new Error(`${JSON.stringify(body)}: ${String(e)}`, { cause: e });
      }
    }
    expect((await me(token)).body).toEqual(before);
    const malformed = await asSession(token, `${svc.api}/users/me`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: '{"display_name": ',
    });
    expect(malformed.status).toBe(400);
    expect((await me(token)).body).toEqual(before);
  });

  it('a body that is not a JSON object is 400 and changes nothing', async () => {
    const token = await fresh();
    const before = (await me(token)).body;
    for (const body of ['[]', '[{"display_name":"x"}]', '"text"', '123', 'true']) {
      const res = await asSession(token, `${svc.api}/users/me`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json' },
        body,
      });
      expect([body, res.status, res.body?.error?.code]).toEqual([
        body,
        400,
        expect.stringMatching(/^(VALIDATION_FAILED|MALFORMED_JSON)$/),
      ]);
    }
    expect((await me(token)).body).toEqual(before);
  });

  it('a username another account holds is 409 USERNAME_TAKEN, and nothing else of that PATCH applies', async () => {
    const first = await fresh();
    const second = await fresh();
    expect((await patch(first, { username: 'taken_name' })).status).toBe(200);
    // Setting your own username again is not a conflict.
    expect((await patch(first, { username: 'taken_name', bio: 'mine' })).status).toBe(200);
    const before = (await me(second)).body;
    const res = await patch(second, { username: 'taken_name', display_name: 'Should not stick' });
    const err = expectContractError(res, 409, 'USERNAME_TAKEN');
    expect(err.details).toEqual({ username: 'taken_name' });
    expect((await me(second)).body).toEqual(before);
  });

  it('ten accounts claiming one username at once: exactly one wins, the others keep theirs', async () => {
    const tokens: string[] = [];
    for (let i = 0; i < 10; i++) tokens.push(await fresh());
    const before = await Promise.all(tokens.map(async (t) => (await me(t)).body));
    const answers: JsonResponse[] = await Promise.all(
      tokens.map((t, i) => patch(t, { username: 'the_one', display_name: `Claimant ${i}` })),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(9);
    for (const a of answers.filter((x) => x.status === 409)) {
      expectContractError(a, 409, 'USERNAME_TAKEN');
    }
    const winner = statuses.indexOf(200);
    const holders = platformQuery<{ id: string }>(
      svc,
      "SELECT id FROM users WHERE username = 'the_one'",
    );
    expect(holders).toEqual([{ id: before[winner].id }]);
    const after = await Promise.all(tokens.map(async (t) => (await me(t)).body));
    for (const [i, profileNow] of after.entries()) {
      expect(profileNow).toEqual(
        i === winner
          ? { ...before[i], username: 'the_one', display_name: `Claimant ${i}` }
          : before[i],
      );
    }
  });

  it('the public profile: no key needed, a key needs users:read; PRIVATE and unknown are 404', async () => {
    const token = await fresh();
    const own = (await patch(token, { username: 'shy_person', display_name: 'Shy' })).body;
    expect((await profile('shy_person')).status).toBe(200);
    const withKey = await createKey(svc, token, { environment: 'test', scopes: ['users:read'] });
    expect((await profile('shy_person', { headers: { 'x-api-key': withKey.key } })).status).toBe(
      200,
    );
    const noScope = await createKey(svc, token, { environment: 'live', scopes: ['markets:read'] });
    expectContractError(
      await profile('shy_person', { headers: { 'x-api-key': noScope.key } }),
      403,
      'INSUFFICIENT_SCOPE',
    );
    expect((await patch(token, { profile_visibility: 'PRIVATE' })).body.profile_visibility).toBe(
      'PRIVATE',
    );
    for (const key of [own.id, 'shy_person', 'SHY_PERSON']) {
      const err = expectContractError(await profile(key), 404, 'NOT_FOUND');
      expect(err.details).toEqual({ user: key });
    }
    // An unknown user answers exactly as a PRIVATE one does.
    for (const key of ['usr_00000000000000000000000000', 'nobody_here']) {
      expect(expectContractError(await profile(key), 404, 'NOT_FOUND').details).toEqual({
        user: key,
      });
    }
    // The owner still reads everything of a PRIVATE profile.
    expect((await me(token)).body).toMatchObject({ username: 'shy_person', display_name: 'Shy' });
    expect((await patch(token, { profile_visibility: 'PUBLIC' })).status).toBe(200);
    expect((await profile('shy_person')).body.display_name).toBe('Shy');
  });

  it('sign-up: a generated username drawn by another sign-up at once is drawn again, not EMAIL_TAKEN', async () => {
    const holder = (await me(await fresh())).body.username as string;
    // Two sign-ups drew the same name and both saw it free: this one's insert meets the other's
    // row. freeUsername answers the clashing name once, as it would have in that race.
    const users = svc.app.get(UsersService);
    const original = users.freeUsername.bind(users);
    let draws = 0;
    users.freeUsername = async () => (++draws === 1 ? holder : original());
    try {
      const res = await register(svc, 'racer@profiles.test');
      expect(res.status).toBe(201);
      expect(draws).toBe(2);
      expect(res.body.username).toMatch(USERNAME_PATTERN);
      expect(res.body.username).not.toBe(holder);
      const rows = platformQuery<{ username: string }>(
        svc,
        'SELECT username FROM users WHERE email = ?',
        'racer@profiles.test',
      );
      expect(rows).toEqual([{ username: res.body.username }]);
    } finally {
      users.freeUsername = original;
    }
    // The same email twice, at once, is still EMAIL_TAKEN for one of them.
    const both = await Promise.all([
      register(svc, 'twice@profiles.test'),
      register(svc, 'twice@profiles.test'),
    ]);
    expect(both.map((r) => r.status).sort()).toEqual([201, 409]);
    expectContractError(
      both.find((r) => r.status === 409)!,
      409,
      'EMAIL_TAKEN',
    );
  });
});
