import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile, execFileSync } from 'node:child_process';
import { join } from 'node:path';
import fc from 'fast-check';
import {
  signatureHeaders,
  signedFetch as exampleSignedFetch,
} from '../../examples/sign-request.js';
import { AdjustableClock, type ManualClock } from '../../src/common/clock/clock.js';
import { totpAt } from '../../src/common/crypto/totp.js';
import { signRequest } from '../../src/modules/access/request-signature.js';
import {
  asKey,
  asSession,
  createKey,
  login,
  signedFetch,
  startAccessApp,
  TRADER,
  type CreatedKey,
} from '../support/access.js';
import { expectError, type Running } from '../support/harness.js';
import { ROOT } from '../support/process.js';
import { openDatabaseOf } from '../support/test-database.js';

const SCRIPT = join(ROOT, 'examples', 'sign-request.sh');

describe('request signing (signing_required keys)', () => {
  let svc: Running;
  let session: string;
  let k: CreatedKey;
  let secret: string;
  /**
   * A fresh second for each signed request: a signature is accepted once (401
   * SIGNATURE_REPLAYED, test/e2e/access-signing-replay.e2e-spec.ts), and this clock does not move
   * by itself.
   */
  const now = () => {
    (svc.clock as ManualClock).advance(1000);
    return svc.clock.nowSeconds();
  };

  beforeAll(async () => {
    svc = await startAccessApp();
    session = await login(svc, TRADER);
    k = await createKey(svc, session, { name: 'signer', signing_required: true });
    secret = k.signing_secret!;
  });
  afterAll(async () => {
    await svc.close();
  });

  it('the signing secret is svc_sign_..., returned once, stored sealed, never listed', async () => {
    expect(secret).toMatch(/^svc_sign_[0-9A-Za-z]{40}$/);
    expect(k.signing_required).toBe(true);
    const list = await asSession(session, `${svc.api}/api-keys`);
    expect(list.text).not.toContain(secret);
    expect(list.body.data.find((x: { id: string }) => x.id === k.id)).not.toHaveProperty(
      'signing_secret',
    );
    const db = openDatabaseOf(svc.dataDir, 'platform', { readonly: true });
    const row = db.prepare('SELECT signing_secret_enc FROM api_keys WHERE id = ?').get(k.id) as {
      signing_secret_enc: string;
    };
    db.close();
    expect(row.signing_secret_enc).toMatch(/^v1\./);
    expect(row.signing_secret_enc).not.toContain(secret.slice(9));
    // A rotation keeps the signing secret (same settings) and does not send it again, so a
    // client rotating its key on a schedule keeps signing as before.
    const rot = await asSession(session, `${svc.api}/api-keys/${k.id}/rotate`, { method: 'POST' });
    expect(rot.status).toBe(200);
    expect(rot.body).not.toHaveProperty('signing_secret');
    expect(rot.body.signing_required).toBe(true);
    k = { ...k, key: rot.body.key };
    const me = (signingSecret: string) =>
      signedFetch(svc, {
        key: k.key,
        secret: signingSecret,
        path: '/api/v1/auth/me',
        timestamp: now(),
      });
    expect((await me(secret)).status).toBe(200);
    // After a leak, rotate_signing_secret replaces it too: the new one is shown this once and
    // the old one stops signing at once.
    const both = await asSession(session, `${svc.api}/api-keys/${k.id}/rotate`, {
      method: 'POST',
      json: { rotate_signing_secret: true },
    });
    expect(both.status).toBe(200);
    expect(both.body.signing_secret).toMatch(/^svc_sign_[0-9A-Za-z]{40}$/);
    expect(both.body.signing_secret).not.toBe(secret);
    k = { ...k, key: both.body.key };
    expectError(await me(secret), 401, 'SIGNATURE_INVALID');
    secret = both.body.signing_secret as string;
    expect((await me(secret)).status).toBe(200);
    const listed = await asSession(session, `${svc.api}/api-keys`);
    expect(listed.text).not.toContain(secret);
    // A mistyped flag is refused, not a rotation that quietly keeps the signing secret.
    for (const json of [
      { rotate_signing_secret: 'true' },
      { rotate_signing_secret: 1 },
      { rotateSigningSecret: true },
      [],
    ]) {
      const bad = await asSession(session, `${svc.api}/api-keys/${k.id}/rotate`, {
        method: 'POST',
        json,
      });
      expectError(bad, 400, 'VALIDATION_FAILED');
    }
    expect((await me(secret)).status).toBe(200); // the key was not rotated by any of them
    // A key without a signing secret has none to replace: the body is well formed, the key's
    // state conflicts (409, not a 400 the request schema could foresee), and nothing is rotated.
    const plain = await createKey(svc, session, { name: 'plain' });
    const refused = await asSession(session, `${svc.api}/api-keys/${plain.id}/rotate`, {
      method: 'POST',
      json: { rotate_signing_secret: true },
    });
    expectError(refused, 409, 'API_KEY_HAS_NO_SIGNING_SECRET');
    expect(refused.body.error.details).toEqual({ key_id: plain.id });
    expect((await asKey(plain.key, `${svc.api}/auth/me`)).status).toBe(200);
  });

  it('a correctly signed request passes; an unsigned one is 401 SIGNATURE_REQUIRED', async () => {
    const ok = await signedFetch(svc, {
      key: k.key,
      secret,
      path: '/api/v1/auth/me',
      timestamp: now(),
    });
    expect(ok.status).toBe(200);
    expect(ok.body.credential.key_id).toBe(k.id);

    expectError(await asKey(k.key, `${svc.api}/auth/me`), 401, 'SIGNATURE_REQUIRED');
    const sig = signatureHeaders({
      signingSecret: secret,
      method: 'GET',
      pathWithQuery: '/api/v1/auth/me',
      timestamp: now(),
    });
    // Half a signature is no signature.
    expectError(
      await asKey(k.key, `${svc.api}/auth/me`, {
        headers: { 'x-svc-timestamp': sig['X-Svc-Timestamp'] },
      }),
      401,
      'SIGNATURE_REQUIRED',
    );
    expectError(
      await asKey(k.key, `${svc.api}/auth/me`, {
        headers: { 'x-svc-signature': sig['X-Svc-Signature'] },
      }),
      401,
      'SIGNATURE_REQUIRED',
    );
  });

  it('a wrong signature is 401 SIGNATURE_INVALID', async () => {
    const base = { key: k.key, path: '/api/v1/auth/me', timestamp: now() };
    // Another secret, a garbled value, no v1= prefix, a non-numeric timestamp, another method.
    expectError(
      await signedFetch(svc, { ...base, secret: `svc_sign_${'x'.repeat(40)}` }),
      401,
      'SIGNATURE_INVALID',
    );
    expectError(
      await signedFetch(svc, { ...base, secret, signature: 'v1=zz' }),
      401,
      'SIGNATURE_INVALID',
    );
    const good = signatureHeaders({
      signingSecret: secret,
      method: 'GET',
      pathWithQuery: base.path,
      timestamp: base.timestamp,
    })['X-Svc-Signature'];
    expectError(
      await signedFetch(svc, { ...base, secret, signature: good.slice(3) }),
      401,
      'SIGNATURE_INVALID',
    );
    expectError(
      await signedFetch(svc, { ...base, secret, signature: good.toUpperCase() }),
      401,
      'SIGNATURE_INVALID',
    );
    const res = await asKey(k.key, `${svc.api}/auth/me`, {
      headers: { 'x-svc-timestamp': 'yesterday', 'x-svc-signature': good },
    });
    expectError(res, 401, 'SIGNATURE_INVALID');
    const signedAsPost = signatureHeaders({
      signingSecret: secret,
      method: 'POST',
      pathWithQuery: base.path,
      timestamp: base.timestamp,
    })['X-Svc-Signature'];
    expectError(
      await signedFetch(svc, { ...base, secret, signature: signedAsPost }),
      401,
      'SIGNATURE_INVALID',
    );
    // The error never echoes the key or the signature.
    const err = expectError(
      await signedFetch(svc, { ...base, secret, signature: `v1=${'0'.repeat(64)}` }),
      401,
      'SIGNATURE_INVALID',
    );
    expect(JSON.stringify(err)).not.toContain(k.key);
  });

  it('timestamps 301 s stale or ahead are 401 SIGNATURE_TIMESTAMP_SKEW; exactly +/-300 s pass', async () => {
    const t = now();
    const at = (timestamp: number) =>
      signedFetch(svc, { key: k.key, secret, path: '/api/v1/auth/me', timestamp });
    const stale = expectError(await at(t - 301), 401, 'SIGNATURE_TIMESTAMP_SKEW');
    expect(stale.details).toMatchObject({
      server_time: t,
      skew_seconds: -301,
      window_seconds: 300,
    });
    const ahead = expectError(await at(t + 301), 401, 'SIGNATURE_TIMESTAMP_SKEW');
    expect(ahead.details.skew_seconds).toBe(301);
    expect((await at(t - 300)).status).toBe(200);
    expect((await at(t + 300)).status).toBe(200);
    expect((await at(t)).status).toBe(200);
  });

  it('a body changed after signing is 401 SIGNATURE_INVALID; the signed body reaches the handler', async () => {
    const path = '/api/v1/security/mfa/step-up';
    const tampered = await signedFetch(svc, {
      key: k.key,
      secret,
      method: 'POST',
      path,
      signBody: '{"code":"000000"}',
      body: '{"code":"111111"}',
      timestamp: now(),
    });
    expectError(tampered, 401, 'SIGNATURE_INVALID');
    // Whitespace counts: the raw bytes are signed, not the parsed JSON.
    expectError(
      await signedFetch(svc, {
        key: k.key,
        secret,
        method: 'POST',
        path,
        signBody: '{"code":"000000"}',
        body: '{"code": "000000"}',
        timestamp: now(),
      }),
      401,
      'SIGNATURE_INVALID',
    );
    // Signed as sent, it passes the pipeline and the handler answers (MFA is not enrolled).
    const signed = await signedFetch(svc, {
      key: k.key,
      secret,
      method: 'POST',
      path,
      body: '{"code":"000000"}',
      timestamp: now(),
    });
    expectError(signed, 409, 'MFA_NOT_ENROLLED');
  });

  it('the query string is part of the signed path', async () => {
    const signedFor1 = {
      key: k.key,
      secret,
      signPath: '/api/v1/markets?limit=1',
      timestamp: now(),
    };
    expectError(
      await signedFetch(svc, { ...signedFor1, path: '/api/v1/markets?limit=2' }),
      401,
      'SIGNATURE_INVALID',
    );
    expectError(
      await signedFetch(svc, { ...signedFor1, path: '/api/v1/markets' }),
      401,
      'SIGNATURE_INVALID',
    );
    const ok = await signedFetch(svc, { ...signedFor1, path: '/api/v1/markets?limit=1' });
    expect(ok.status).toBe(200);
    expect(ok.body.data).toHaveLength(1);
  });

  it('key state is checked before the signature: a revoked signing key unsigned is API_KEY_REVOKED', async () => {
    const other = await createKey(svc, session, { name: 'signer-2', signing_required: true });
    expect(
      (await asSession(session, `${svc.api}/api-keys/${other.id}/revoke`, { method: 'POST' }))
        .status,
    ).toBe(200);
    expectError(await asKey(other.key, `${svc.api}/auth/me`), 401, 'API_KEY_REVOKED');
  });

  it('keys without signing_required need no signature', async () => {
    const plain = await createKey(svc, session, { name: 'plain' });
    expect((await asKey(plain.key, `${svc.api}/auth/me`)).status).toBe(200);
  });

  it('the TypeScript example signs exactly as the server verifies (property test)', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 60 }),
        fc.integer({ min: 0, max: 4_000_000_000 }),
        fc.constantFrom('get', 'GET', 'post', 'PATCH', 'DELETE'),
        fc.webPath(),
        fc.option(fc.string({ maxLength: 200 }), { nil: undefined }),
        (s, ts, method, path, body) => {
          const ours = signatureHeaders({
            signingSecret: s,
            method,
            pathWithQuery: path,
            body,
            timestamp: ts,
          });
          expect(ours['X-Svc-Timestamp']).toBe(String(ts));
          expect(ours['X-Svc-Signature']).toBe(
            signRequest(
              s,
              String(ts),
              method,
              path,
              body === undefined ? undefined : Buffer.from(body),
            ),
          );
        },
      ),
    );
  });
});

function runScript(
  env: Record<string, string>,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'bash',
      [SCRIPT, ...args],
      { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, timeout: 20_000 },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** The status line the script prints last, and the JSON body above it. */
function parseScript(stdout: string): { status: number; body: unknown } {
  const lines = stdout.trimEnd().split('\n');
  const m = /^HTTP (\d{3})$/.exec(lines[lines.length - 1] ?? '');
  if (m === null) throw new Error(`no status line in: ${stdout}`);
  return { status: Number(m[1]), body: JSON.parse(lines.slice(0, -1).join('\n')) };
}

describe('the signing examples against a live server (wall clock)', () => {
  let svc: Running;
  let session: string;
  let k: CreatedKey;
  let env: Record<string, string>;

  beforeAll(async () => {
    // openssl and curl are prerequisites of the shell example: a missing one fails here, loudly.
    for (const tool of ['openssl', 'curl', 'bash']) {
      try {
        execFileSync('which', [tool], { stdio: 'pipe' });
      } catch {
        throw new Error(`${tool} is not installed: the curl + openssl signing example cannot run`);
      }
    }
    // The script stamps requests with `date +%s`, so this server runs on the wall clock.
    svc = await startAccessApp({ clock: new AdjustableClock() });
    session = await login(svc, TRADER);
    k = await createKey(svc, session, {
      name: 'example',
      environment: 'test',
      signing_required: true,
    });
    env = { SVC_BASE_URL: svc.baseUrl, SVC_API_KEY: k.key, SVC_SIGNING_SECRET: k.signing_secret! };
  });
  afterAll(async () => {
    await svc.close();
  });

  it('examples/sign-request.sh (curl + openssl) gets 200 for GET /auth/me', async () => {
    const run = await runScript(env, ['GET', '/api/v1/auth/me']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const { status, body } = parseScript(run.stdout);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      credential: { type: 'API_KEY', key_id: k.id, environment: 'test' },
    });
  });

  it('examples/sign-request.sh signs the query string and a JSON body', async () => {
    const list = await runScript(env, ['GET', '/api/v1/markets?limit=2']);
    expect(list.code).toBe(0);
    const parsed = parseScript(list.stdout) as { status: number; body: { data: unknown[] } };
    expect(parsed.status).toBe(200);
    expect(parsed.body.data).toHaveLength(2);

    const enroll = await asSession(session, `${svc.api}/security/mfa/enroll`, { method: 'POST' });
    expect(enroll.status).toBe(201);
    const code = totpAt(enroll.body.secret, Math.floor(svc.clock.nowSeconds() / 30));
    const step = await runScript(env, [
      'post',
      '/api/v1/security/mfa/step-up',
      JSON.stringify({ code }),
    ]);
    expect(step.code).toBe(0);
    const stepped = parseScript(step.stdout) as {
      status: number;
      body: { stepped_up_until: string };
    };
    expect(stepped.status).toBe(200);
    expect(typeof stepped.body.stepped_up_until).toBe('string');
  });

  it('examples/sign-request.sh with a wrong secret or a stale SVC_TIMESTAMP is refused', async () => {
    const wrong = await runScript({ ...env, SVC_SIGNING_SECRET: `svc_sign_${'x'.repeat(40)}` }, [
      'GET',
      '/api/v1/auth/me',
    ]);
    const w = parseScript(wrong.stdout) as { status: number; body: { error: { code: string } } };
    expect(w.status).toBe(401);
    expect(w.body.error.code).toBe('SIGNATURE_INVALID');
    const stale = await runScript({ ...env, SVC_TIMESTAMP: String(svc.clock.nowSeconds() - 400) }, [
      'GET',
      '/api/v1/auth/me',
    ]);
    const st = parseScript(stale.stdout) as { status: number; body: { error: { code: string } } };
    expect(st.status).toBe(401);
    expect(st.body.error.code).toBe('SIGNATURE_TIMESTAMP_SKEW');
  });

  it('examples/sign-request.sh without its variables fails with a message', async () => {
    const run = await runScript({}, ['GET', '/api/v1/auth/me']);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('SVC_BASE_URL');
  });

  it('examples/sign-request.ts signedFetch gets 200 with the default wall-clock timestamp', async () => {
    const res = await exampleSignedFetch({
      baseUrl: svc.baseUrl,
      apiKey: k.key,
      signingSecret: k.signing_secret!,
      method: 'GET',
      pathWithQuery: '/api/v1/markets?limit=1',
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: unknown[] }).data).toHaveLength(1);
    const post = await exampleSignedFetch({
      baseUrl: svc.baseUrl,
      apiKey: k.key,
      signingSecret: k.signing_secret!,
      method: 'POST',
      pathWithQuery: '/api/v1/security/mfa/step-up',
      body: JSON.stringify({ code: '000000' }),
    });
    // Signature accepted; the handler refuses the made-up code.
    expect(post.status).toBe(422);
    expect(((await post.json()) as { error: { code: string } }).error.code).toBe(
      'MFA_CODE_INVALID',
    );
  });
});
