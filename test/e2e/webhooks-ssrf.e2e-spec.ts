import { lookup } from 'node:dns/promises';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectContractError, type Running } from '../support/harness.js';
import { as, expectValidation, keyFor, type Trader } from '../support/orders.js';
import { verifiedAccount } from '../support/access.js';
import { Receiver } from '../support/receiver.js';
import {
  attempted,
  createEndpoint,
  createEndpointRaw,
  health,
  HOOK_SCOPES,
  hookUser,
  sendTest,
  sleep,
  startWebhookApp,
} from '../support/webhooks.js';

const PRODUCTION = {
  APP_ENV: 'production',
  RATE_LIMITS_ENABLED: 'true',
  JWT_SECRET: 'j'.repeat(48),
  SECRETS_ENCRYPTION_KEY: 'ab'.repeat(32),
};

/** Every target class the service must refuse (SPEC.md; issue 7 URL safety). */
const REFUSED = [
  'https://127.0.0.1/hooks',
  'https://127.9.9.9:8443/hooks',
  'https://10.0.0.1/',
  'https://172.16.0.1/',
  'https://192.168.1.10/',
  'https://169.254.169.254/latest/meta-data/',
  'https://100.64.0.1/',
  'https://0.0.0.0/',
  'https://[::1]/',
  'https://[::ffff:127.0.0.1]/',
  'https://[::ffff:7f00:1]/',
  'https://[::ffff:169.254.169.254]/',
  'https://[fd00::1]/',
  'https://[fe80::1]/',
  'https://localhost/',
  'https://api.localhost/',
  'https://metadata.google.internal/computeMetadata/v1/',
  'https://2130706433/', // 127.0.0.1 as one number
  'https://0x7f.1/', // 127.0.0.1 in hex shorthand
];

/** A host name (not `localhost` itself, which is refused by name) that resolves only to loopback here. */
async function loopbackName(): Promise<string | null> {
  const names = new Set<string>(['localhost.', hostname()]);
  try {
    for (const line of readFileSync('/etc/hosts', 'utf8').split('\n')) {
      const [addr, ...rest] = line.replace(/#.*/, '').trim().split(/\s+/);
      if (addr === '127.0.0.1' || addr === '::1') for (const n of rest) names.add(n);
    }
  } catch {
    // no hosts file
  }
  for (const n of names) {
    if (n === '' || n === 'localhost' || /\.(localhost|local|internal)\.?$/.test(n)) continue;
    try {
      const addrs = await lookup(n, { all: true });
      if (addrs.length > 0 && addrs.every((a) => a.address === '127.0.0.1' || a.address === '::1'))
        return n;
    } catch {
      // does not resolve here
    }
  }
  return null;
}

/**
 * SSRF protection (issue 7): https only and no private, loopback, link-local, CGNAT, metadata or
 * IPv4-mapped targets on production, both at registration and at connect time; the same refusal in
 * development when WEBHOOK_ALLOW_PRIVATE_TARGETS=false. (The ranges themselves are unit-tested in
 * src/modules/webhooks/url-safety.spec.ts.)
 */
describe('webhooks SSRF: APP_ENV=production', () => {
  let svc: Running;
  let t: Trader;

  beforeAll(async () => {
    svc = await startWebhookApp({ env: PRODUCTION });
    // Production seeds no demo account: a registered, verified one.
    const token = await verifiedAccount(svc, 'hooks@ssrf.test');
    t = await keyFor(svc, 'hooks@ssrf.test', token, {
      environment: 'live',
      scopes: HOOK_SCOPES,
    });
  });
  afterAll(async () => {
    await svc.close();
  });

  it.each(REFUSED)('%s -> 422 WEBHOOK_URL_NOT_ALLOWED', async (url) => {
    const err = expectContractError(
      await createEndpointRaw(svc, t, { url, events: ['*'] }),
      422,
      'WEBHOOK_URL_NOT_ALLOWED',
    );
    expect(typeof err.details.host).toBe('string');
  });

  it('http:// is 400 VALIDATION_FAILED (https required), even for a public host', async () => {
    for (const url of ['http://93.184.216.34/hooks', 'http://127.0.0.1/hooks']) {
      expectValidation(await createEndpointRaw(svc, t, { url, events: ['*'] }), 'url');
    }
  });

  it('a public https target is accepted, and cannot be moved to a private one by PATCH', async () => {
    const ep = await createEndpoint(svc, t, 'https://93.184.216.34/hooks', ['market.resolved']);
    expect(ep.status).toBe('ACTIVE');
    for (const url of ['https://10.0.0.1/', 'https://[::ffff:7f00:1]/', 'https://localhost/']) {
      expectContractError(
        await as(t, `${svc.api}/webhooks/${ep.id}`, { method: 'PATCH', json: { url } }),
        422,
        'WEBHOOK_URL_NOT_ALLOWED',
      );
    }
    expectValidation(
      await as(t, `${svc.api}/webhooks/${ep.id}`, {
        method: 'PATCH',
        json: { url: 'http://93.184.216.34/' },
      }),
      'url',
    );
    const res = await as(t, `${svc.api}/webhooks/${ep.id}`, { method: 'DELETE' });
    expect(res.status).toBe(200);
  });
});

describe('webhooks SSRF: development with WEBHOOK_ALLOW_PRIVATE_TARGETS=false', () => {
  let svc: Running;
  let t: Trader;
  let rx: Receiver;
  let name: string | null;

  beforeAll(async () => {
    rx = await Receiver.start();
    name = await loopbackName();
    svc = await startWebhookApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' } });
    t = await hookUser(svc);
  });
  afterAll(async () => {
    await svc.close();
    await rx.close();
  });

  it('loopback literals and localhost are refused at registration (http is allowed outside production)', async () => {
    for (const url of [
      rx.url('/x'),
      `http://localhost:${rx.port}/x`,
      `http://[::1]:${rx.port}/x`,
      `http://[::ffff:127.0.0.1]:${rx.port}/x`,
    ]) {
      expectContractError(
        await createEndpointRaw(svc, t, { url, events: ['*'] }),
        422,
        'WEBHOOK_URL_NOT_ALLOWED',
      );
    }
    expect(rx.requests).toHaveLength(0);
  });

  it('a host name that resolves to 127.0.0.1 is refused after DNS resolution at registration', async () => {
    if (name === null) {
      console.warn('no host name resolving only to loopback was found here; nothing to check');
      return;
    }
    const err = expectContractError(
      await createEndpointRaw(svc, t, { url: `http://${name}:${rx.port}/x`, events: ['*'] }),
      422,
      'WEBHOOK_URL_NOT_ALLOWED',
    );
    expect(err.details.host).toBe(name);
  });

  it('a well-formed host that does not resolve is 422 WEBHOOK_HOST_UNRESOLVED naming it; a public address is accepted', async () => {
    const err = expectContractError(
      await createEndpointRaw(svc, t, { url: 'http://no-such-host.invalid/x', events: ['*'] }),
      422,
      'WEBHOOK_HOST_UNRESOLVED',
    );
    expect(err.details.host).toBe('no-such-host.invalid');
    const listed = await as(t, `${svc.api}/webhooks`);
    expect(listed.body.data.map((e: { url: string }) => e.url)).not.toContain(
      'http://no-such-host.invalid/x',
    );
    const ep = await createEndpoint(svc, t, 'http://93.184.216.34/x', ['market.resolved']);
    await as(t, `${svc.api}/webhooks/${ep.id}`, { method: 'DELETE' });
  });
});

describe('webhooks SSRF: connect-time refusal of endpoints registered while private targets were allowed', () => {
  it('after a restart with WEBHOOK_ALLOW_PRIVATE_TARGETS=false, loopback endpoints get nothing (literal and name)', async () => {
    const rx = await Receiver.start();
    let svc = await startWebhookApp();
    try {
      const t = await hookUser(svc);
      const literal = await createEndpoint(svc, t, rx.url('/ssrf/literal'));
      const named = await createEndpoint(svc, t, `http://localhost:${rx.port}/ssrf/named`);
      await svc.close({ keepData: true });
      svc = await startWebhookApp({
        dataDir: svc.dataDir,
        env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' },
      });
      for (const ep of [literal, named]) {
        const d = await sendTest(svc, t, ep.id);
        const a = await attempted(svc, t, ep.id, d.id, 1);
        expect(a).toMatchObject({
          status: 'PENDING',
          response_status: null,
          last_error: 'target address is not allowed',
        });
        expect((await health(svc, t, ep.id)).last_error).toBe('target address is not allowed');
      }
      await sleep(100);
      expect(rx.requests).toHaveLength(0);
    } finally {
      await svc.close();
      await rx.close();
    }
  });
});
