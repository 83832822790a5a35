import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import {
  asKey,
  asSession,
  createKey,
  login,
  outbox,
  signedFetch,
  startAccessApp,
  TRADER,
} from '../support/access.js';
import { expectError, http, type JsonResponse, type Running } from '../support/harness.js';
import { openDatabaseOf, platformStoreLabel, storedDataOf } from '../support/test-database.js';

/**
 * One realistic session of a developer: keys of both classes, a signing key, a rotation and a
 * revocation, each used and each refused once; with Idempotency-Key on the mutations. Then every
 * place a secret could leak is searched for every secret seen.
 */
describe('secrets never leak: logs, outbox, list responses, error bodies, the data directory', () => {
  let svc: Running;
  const secrets: { label: string; value: string }[] = [];
  const errorBodies: JsonResponse[] = [];
  const prefixes: Record<string, string> = {};
  let listText = '';

  const remember = (label: string, value: string | undefined) => {
    if (value === undefined) throw new Error(`no ${label}`);
    secrets.push({ label, value });
  };

  beforeAll(async () => {
    svc = await startAccessApp({ env: { LOG_LEVEL: 'trace' } });
    const session = await login(svc, TRADER);
    const mutate = (path: string, idem: string) =>
      asSession(session, `${svc.api}${path}`, {
        method: 'POST',
        headers: { 'idempotency-key': idem },
      });

    const live = await createKey(svc, session, { name: 'live-key' });
    const test = await createKey(svc, session, { name: 'test-key', environment: 'test' });
    const signer = await createKey(svc, session, {
      name: 'signer',
      environment: 'live',
      signing_required: true,
      scopes: ['markets:read', 'orders:write'],
      acknowledge_write_scopes: true,
    });
    remember('live key', live.key);
    remember('test key', test.key);
    remember('signing key', signer.key);
    remember('signing secret', signer.signing_secret);
    prefixes.live = live.prefix;
    prefixes.test = test.prefix;
    prefixes.signer = signer.prefix;

    // Use each; the signing key signed, then unsigned and badly signed.
    for (const k of [live.key, test.key])
      expect((await asKey(k, `${svc.api}/auth/me`)).status).toBe(200);
    const ts = svc.clock.nowSeconds();
    expect(
      (
        await signedFetch(svc, {
          key: signer.key,
          secret: signer.signing_secret!,
          path: '/api/v1/markets?limit=1',
          timestamp: ts,
        })
      ).status,
    ).toBe(200);
    errorBodies.push(await asKey(signer.key, `${svc.api}/auth/me`));
    errorBodies.push(
      await signedFetch(svc, {
        key: signer.key,
        secret: `svc_sign_${'z'.repeat(40)}`,
        path: '/api/v1/auth/me',
        timestamp: ts,
      }),
    );
    errorBodies.push(
      await signedFetch(svc, {
        key: signer.key,
        secret: signer.signing_secret!,
        path: '/api/v1/auth/me',
        timestamp: ts - 1000,
      }),
    );

    // Rotate the live key (with an Idempotency-Key, replayed once).
    const rot = await mutate(`/api-keys/${live.id}/rotate`, 'rotate-live');
    expect(rot.status).toBe(200);
    const replay = await mutate(`/api-keys/${live.id}/rotate`, 'rotate-live');
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    remember('rotated live key', rot.body.key);
    prefixes.rotated = rot.body.prefix;
    errorBodies.push(await asKey(live.key, `${svc.api}/auth/me`)); // old secret
    expect((await asKey(rot.body.key, `${svc.api}/auth/me`)).status).toBe(200);

    // Revoke the test key, then use it.
    expect((await mutate(`/api-keys/${test.id}/revoke`, 'revoke-test')).status).toBe(200);
    errorBodies.push(await asKey(test.key, `${svc.api}/auth/me`));
    errorBodies.push(await asKey(test.key, `${svc.api}/markets`));

    // Unknown and malformed keys, a foreign origin, a key on a session route, a missing scope.
    const unknown = `svc_live_${'Q'.repeat(32)}`;
    remember('unknown key', unknown);
    errorBodies.push(await asKey(unknown, `${svc.api}/auth/me`));
    errorBodies.push(await asKey(`${unknown}x`, `${svc.api}/auth/me`));
    errorBodies.push(
      await http(`${svc.api}/auth/me`, {
        headers: { 'x-api-key': rot.body.key, origin: 'https://evil.example' },
      }),
    );
    errorBodies.push(await asKey(rot.body.key, `${svc.api}/api-keys`));
    errorBodies.push(await asKey(signer.key, `${svc.api}/api-keys`));

    listText = (await asSession(session, `${svc.api}/api-keys`)).text;
    // Let the app finish writing its log lines.
    await new Promise((r) => setTimeout(r, 100));
  });
  afterAll(async () => {
    await svc.close();
  });

  it('every refusal was an error body, and none echoes a presented key or secret', () => {
    const codes = errorBodies.map((r) => `${r.status} ${r.body?.error?.code}`);
    expect(codes).toEqual([
      '401 SIGNATURE_REQUIRED',
      '401 SIGNATURE_INVALID',
      '401 SIGNATURE_TIMESTAMP_SKEW',
      '401 UNAUTHENTICATED',
      '401 API_KEY_REVOKED',
      '401 API_KEY_REVOKED',
      '401 UNAUTHENTICATED',
      '401 UNAUTHENTICATED',
      '403 CORS_ORIGIN_REJECTED',
      '403 SESSION_REQUIRED',
      // The signing key sent unsigned: the key is judged before the route's kind of credential.
      '401 SIGNATURE_REQUIRED',
    ]);
    for (const res of errorBodies) {
      for (const s of secrets)
        expect({ secret: s.label, leaked: res.text.includes(s.value) }).toEqual({
          secret: s.label,
          leaked: false,
        });
      expect(res.text).not.toContain(`${secrets[0].value}x`);
    }
  });

  it('the log output holds no secret (LOG_LEVEL=trace)', () => {
    expect(svc.logs.length).toBeGreaterThan(10);
    const all = svc.logs.join('\n');
    for (const s of secrets)
      expect({ secret: s.label, leaked: all.includes(s.value) }).toEqual({
        secret: s.label,
        leaked: false,
      });
  });

  it('the list response holds no secret and no secret hash', () => {
    for (const s of secrets) {
      expect(listText).not.toContain(s.value);
      expect(listText).not.toContain(createHash('sha256').update(s.value).digest('hex'));
    }
  });

  it('create, rotate and revoke each sent a security mail with the key prefix only', () => {
    const mails = outbox(svc, TRADER);
    const security = mails.filter((m) => m.kind.startsWith('API_KEY_'));
    expect(security.map((m) => m.kind)).toEqual([
      'API_KEY_CREATED',
      'API_KEY_CREATED',
      'API_KEY_CREATED',
      'API_KEY_ROTATED',
      'API_KEY_REVOKED',
    ]);
    const expected = [
      prefixes.live,
      prefixes.test,
      prefixes.signer,
      prefixes.rotated,
      prefixes.test,
    ];
    security.forEach((m, i) => {
      expect(m.subject).toContain(expected[i]);
      expect(m.body).toContain(expected[i]);
    });
    // Prefix only: never one character more of any secret.
    for (const m of mails) {
      const text = `${m.subject}\n${m.body}`;
      for (const s of secrets) {
        expect({ secret: s.label, leaked: text.includes(s.value.slice(0, 14)) }).toEqual({
          secret: s.label,
          leaked: false,
        });
      }
    }
  });

  it('nothing the service stores (data directory files, database rows) holds a key or signing secret', () => {
    // Every file, those in folders too (data exports keep theirs under exports/), and on
    // PostgreSQL every row of the boot's schemas.
    const stored = storedDataOf(svc.dataDir);
    expect(stored.map((d) => d.label)).toContain(platformStoreLabel(svc.dataDir));
    for (const d of stored) {
      for (const s of secrets) {
        expect({
          file: d.label,
          secret: s.label,
          found: d.bytes.includes(Buffer.from(s.value)),
        }).toEqual({
          file: d.label,
          secret: s.label,
          found: false,
        });
      }
    }
    // Keys are stored as their SHA-256; the signing secret sealed.
    const db = openDatabaseOf(svc.dataDir, 'platform', { readonly: true });
    try {
      const rows = db.prepare('SELECT secret_hash, signing_secret_enc FROM api_keys').all() as {
        secret_hash: string;
        signing_secret_enc: string | null;
      }[];
      const hashes = rows.map((r) => r.secret_hash);
      const current = secrets.filter((s) =>
        ['rotated live key', 'test key', 'signing key'].includes(s.label),
      );
      for (const s of current)
        expect(hashes).toContain(createHash('sha256').update(s.value).digest('hex'));
      expect(rows.filter((r) => r.signing_secret_enc !== null)).toHaveLength(1);
    } finally {
      db.close();
    }
  });

  it('a revoked key is refused with a message naming its prefix only', () => {
    const revoked = errorBodies[4];
    const err = expectError(revoked, 401, 'API_KEY_REVOKED');
    expect(err.message).toContain(prefixes.test);
  });
});

/** A minimal SMTP sink (no TLS, no auth): records every DATA section it receives. */
function smtpSink(): Promise<{ url: string; messages: string[]; close(): Promise<void> }> {
  const messages: string[] = [];
  const server = createServer((socket) => {
    let buffer = '';
    let inData = false;
    let data = '';
    socket.write('220 sink ESMTP\r\n');
    socket.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      let i: number;
      while ((i = buffer.indexOf('\r\n')) >= 0) {
        const line = buffer.slice(0, i);
        buffer = buffer.slice(i + 2);
        if (inData) {
          if (line === '.') {
            inData = false;
            messages.push(data);
            data = '';
            socket.write('250 queued\r\n');
          } else {
            data += `${line.startsWith('..') ? line.slice(1) : line}\n`;
          }
          continue;
        }
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO' || verb === 'HELO') socket.write('250 sink\r\n');
        else if (verb === 'DATA') {
          inData = true;
          socket.write('354 go ahead\r\n');
        } else if (verb === 'QUIT') {
          socket.end('221 bye\r\n');
        } else socket.write('250 ok\r\n');
      }
    });
    socket.on('error', () => undefined);
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `smtp://127.0.0.1:${port}`,
        messages,
        close: () => new Promise<void>((r) => server.close(() => r())),
      });
    });
  });
}

describe('with SMTP_URL set, security mails go out over SMTP with the prefix only', () => {
  let svc: Running;
  let sink: Awaited<ReturnType<typeof smtpSink>>;
  beforeAll(async () => {
    sink = await smtpSink();
    svc = await startAccessApp({ env: { SMTP_URL: sink.url } });
  });
  afterAll(async () => {
    await svc.close();
    await sink.close();
  });

  it('create, rotate and revoke mails arrive over SMTP and are marked sent in the outbox', async () => {
    const session = await login(svc, TRADER);
    const k = await createKey(svc, session, { name: 'smtp', signing_required: true });
    const rot = await asSession(session, `${svc.api}/api-keys/${k.id}/rotate`, { method: 'POST' });
    await asSession(session, `${svc.api}/api-keys/${k.id}/revoke`, { method: 'POST' });
    const deadline = Date.now() + 5000;
    while (sink.messages.length < 3 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(sink.messages).toHaveLength(3);
    const wire = sink.messages.join('\n');
    for (const s of [k.key, k.signing_secret!, rot.body.key]) expect(wire).not.toContain(s);
    expect(sink.messages[0]).toContain(k.prefix);
    expect(sink.messages[1]).toContain(rot.body.prefix);
    expect(sink.messages[0]).toMatch(/^To: trader@sandbox\.test/m);
    // The outbox records the delivery.
    const db = openDatabaseOf(svc.dataDir, 'platform', { readonly: true });
    try {
      const deadline2 = Date.now() + 5000;
      let rows: { sent_at: string | null; error: string | null }[] = [];
      do {
        rows = db
          .prepare("SELECT sent_at, error FROM mail_outbox WHERE kind LIKE 'API_KEY_%'")
          .all() as typeof rows;
        if (rows.every((r) => r.sent_at !== null)) break;
        await new Promise((r) => setTimeout(r, 50));
      } while (Date.now() < deadline2);
      expect(rows).toHaveLength(3);
      for (const r of rows) expect(r).toEqual({ sent_at: expect.any(String), error: null });
    } finally {
      db.close();
    }
  });
});
