import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request } from 'node:http';
import { createKey, login, TRADER } from '../support/access.js';
import { burst } from '../support/burst.js';
import { expectError, http, startApp, type Running } from '../support/harness.js';
import { jsonClient } from '../support/json-client.js';
import { limit, TRADABLE } from '../support/orders.js';

const EXPLORER = { 'svc-client': 'api-explorer' };
const WRITE_KEY = {
  scopes: ['orders:read', 'orders:write', 'markets:read', 'wallet:read', 'wallet:write'],
  acknowledge_write_scopes: true,
};

describe('the API Explorer at /explorer (CONTRACT.md "Browser pages")', () => {
  let svc: Running;
  let live: string;
  let test: string;
  beforeAll(async () => {
    svc = await startApp({ env: { STAGING_BASE_URL: 'https://staging.explorer.example' } });
    const session = await login(svc, TRADER);
    live = (await createKey(svc, session, { name: 'live', environment: 'live', ...WRITE_KEY })).key;
    test = (await createKey(svc, session, { name: 'test', environment: 'test', ...WRITE_KEY })).key;
  });
  afterAll(async () => {
    await svc.close();
  });

  it('serves its page as HTML with its own CSP: scripts from this origin only, no CDN', async () => {
    for (const path of ['/explorer', '/explorer/']) {
      const res = await http(`${svc.baseUrl}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('x-request-id')).toBeTruthy();
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("connect-src 'self' https://staging.explorer.example");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(res.text).toContain('<div id="swagger-ui"></div>');
      expect(res.text).toContain('test keys only');
      // Every script, style and icon it names is served from this origin.
      const refs = [...res.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
      expect(refs.length).toBeGreaterThanOrEqual(5);
      for (const ref of refs) expect(ref).toMatch(/^\/explorer\//);
    }
  });

  it('serves the renderer and its own script with the right content types', async () => {
    const assets: [string, RegExp][] = [
      ['/explorer/ui/swagger-ui-bundle.js', /^(text|application)\/javascript/],
      ['/explorer/ui/swagger-ui.css', /^text\/css/],
      ['/explorer/ui/favicon-32x32.png', /^image\/png$/],
      ['/explorer/page/explorer.js', /^(text|application)\/javascript/],
      ['/explorer/page/explorer.css', /^text\/css/],
    ];
    for (const [path, type] of assets) {
      const res = await fetch(`${svc.baseUrl}${path}`);
      expect([path, res.status]).toEqual([path, 200]);
      expect(res.headers.get('content-type')).toMatch(type);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(100);
    }
    const script = await (await fetch(`${svc.baseUrl}/explorer/page/explorer.js`)).text();
    expect(script).toContain("'/api/v1/openapi.json'");
    expect(script).toContain('svc_live_');
  });

  it('serves nothing else from swagger-ui-dist (its demo page, its petstore initializer, its maps)', async () => {
    for (const path of [
      '/explorer/ui/index.html',
      '/explorer/ui/swagger-initializer.js',
      '/explorer/ui/swagger-ui-bundle.js.map',
      '/explorer/ui/package.json',
      '/explorer/ui/../package.json',
      '/explorer/page/index.html',
      '/explorer/nothing.js',
    ]) {
      const res = await http(`${svc.baseUrl}${path}`);
      expect([path, res.status]).toEqual([path, 404]);
      expect(res.body?.error?.code).toBe('NOT_FOUND');
    }
  });

  it('a live key on a request marked Svc-Client: api-explorer is 403 LIVE_KEY_EXPLORER, before it is used', async () => {
    for (const client of ['api-explorer', 'API-Explorer', ' api-explorer ']) {
      const res = await http(`${svc.api}/wallet`, {
        headers: { 'x-api-key': live, 'svc-client': client },
      });
      const err = expectError(res, 403, 'LIVE_KEY_EXPLORER');
      expect(err.message).toContain('svc_test_');
      expect(res.text).not.toContain(live);
    }
    // Public operations and writes too; a malformed live key is refused the same way.
    expectError(
      await http(`${svc.api}/markets?limit=1`, { headers: { 'x-api-key': live, ...EXPLORER } }),
      403,
      'LIVE_KEY_EXPLORER',
    );
    expectError(
      await http(`${svc.api}/health`, { headers: { 'x-api-key': live, ...EXPLORER } }),
      403,
      'LIVE_KEY_EXPLORER',
    );
    expectError(
      await http(`${svc.api}/wallet`, { headers: { 'x-api-key': 'svc_live_short', ...EXPLORER } }),
      403,
      'LIVE_KEY_EXPLORER',
    );
    // A write is refused before anything happens: no order is placed.
    const order = limit(TRADABLE[0], 'BUY', 'YES', 5, 1);
    expectError(
      await http(`${svc.api}/orders`, {
        method: 'POST',
        headers: { 'x-api-key': live, ...EXPLORER },
        json: order,
      }),
      403,
      'LIVE_KEY_EXPLORER',
    );
    const orders = await http(`${svc.api}/orders?limit=100`, { headers: { 'x-api-key': live } });
    expect(orders.status).toBe(200);
    expect(orders.body.data).toEqual([]);
  });

  it('a test key from the Explorer, and a live key without the mark, pass as before', async () => {
    const fromExplorer = await http(`${svc.api}/wallet`, {
      headers: { 'x-api-key': test, ...EXPLORER },
    });
    expect(fromExplorer.status).toBe(200);
    const liveDirect = await http(`${svc.api}/wallet`, { headers: { 'x-api-key': live } });
    expect(liveDirect.status).toBe(200);
    const otherClient = await http(`${svc.api}/wallet`, {
      headers: { 'x-api-key': live, 'svc-client': 'my-bot' },
    });
    expect(otherClient.status).toBe(200);
    // A test key from the Explorer reaches the sandbox controls (the paper engine).
    const reset = await http(`${svc.api}/sandbox/reset`, {
      method: 'POST',
      headers: { 'x-api-key': test, ...EXPLORER },
    });
    expect(reset.status).toBe(200);
  });

  it('the OpenAPI document names the Explorer, its header and LIVE_KEY_EXPLORER', async () => {
    const doc = (await http(`${svc.api}/openapi.json`)).body;
    expect(doc.info.description).toContain('/explorer');
    expect(doc.info.description).toContain('Svc-Client: api-explorer');
    expect(doc.components.securitySchemes.ApiKeyAuth.description).toContain('LIVE_KEY_EXPLORER');
    expect(doc.servers[0].url).toBe('https://staging.explorer.example');
    const wallet = doc.paths['/api/v1/wallet'].get;
    expect(wallet.responses['403'].description).toContain('LIVE_KEY_EXPLORER');
  });
});

describe('the same-origin rule: a request whose Origin is its own scheme and Host is not cross-origin', () => {
  let svc: Running;
  let session: string;
  let key: string;
  beforeAll(async () => {
    svc = await startApp({ env: { FIRST_PARTY_ORIGINS: 'https://app.example' } });
    session = await login(svc, TRADER);
    key = (
      await createKey(svc, session, {
        name: 'same-origin',
        environment: 'test',
        scopes: ['orders:write', 'wallet:write'],
        acknowledge_write_scopes: true,
      })
    ).key;
  });
  afterAll(async () => {
    await svc.close();
  });

  it("a credentialed POST from the page's own origin is served; any other origin is still refused", async () => {
    const own = svc.baseUrl; // http://127.0.0.1:<port>, the Host the request is sent to
    const posted = await http(`${svc.api}/api-keys`, {
      method: 'POST',
      headers: { origin: own, authorization: `Bearer ${session}` },
      json: { name: 'from-the-page', environment: 'test' },
    });
    expect(posted.status).toBe(201);
    expect(posted.headers.get('access-control-allow-origin')).toBe(own);
    const reset = await http(`${svc.api}/sandbox/reset`, {
      method: 'POST',
      headers: { origin: own, 'x-api-key': key },
    });
    expect(reset.status).toBe(200);
    // Same host, another port or scheme; another host: cross-origin, refused with credentials.
    const port = new URL(own).port;
    for (const other of [
      `http://127.0.0.1:${Number(port) + 1}`,
      `https://127.0.0.1:${port}`,
      `http://localhost:${port}`,
      'https://evil.example',
    ]) {
      const res = await http(`${svc.api}/api-keys`, {
        method: 'POST',
        headers: { origin: other, authorization: `Bearer ${session}` },
        json: { name: 'csrf', environment: 'test' },
      });
      const err = expectError(res, 403, 'CORS_ORIGIN_REJECTED');
      expect(err.details.origin).toBe(other);
    }
    const list = await http(`${svc.api}/api-keys`, {
      headers: { authorization: `Bearer ${session}` },
    });
    const names = list.body.data.map((k: { name: string }) => k.name);
    expect(names).toContain('from-the-page');
    expect(names).not.toContain('csrf');
  });

  it('the Origin is compared with the Host the request names, not with the address it reached', async () => {
    const { port } = new URL(svc.baseUrl);
    const post = (host: string, origin: string): Promise<{ status: number; body: string }> =>
      new Promise((resolve, reject) => {
        const body = JSON.stringify({ name: `host-${host}`, environment: 'test' });
        const req = request(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: '/api/v1/api-keys',
            headers: {
              host,
              origin,
              authorization: `Bearer ${session}`,
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(body),
            },
          },
          (res) => {
            let text = '';
            res.on('data', (c: Buffer) => (text += c.toString('utf8')));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    // The page a browser loaded from http://sandbox.example posts with that origin and Host.
    expect((await post('sandbox.example', 'http://sandbox.example')).status).toBe(201);
    expect((await post('Sandbox.Example:8080', 'http://sandbox.example:8080')).status).toBe(201);
    // The origin of the address reached, under another Host, is cross-origin.
    const refused = await post('sandbox.example', `http://127.0.0.1:${port}`);
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body).error.code).toBe('CORS_ORIGIN_REJECTED');
    expect((await post('sandbox.example', 'https://sandbox.example')).status).toBe(403);
  });
});

describe('with APP_ENV=production the Explorer is not served', () => {
  let svc: Running;
  beforeAll(async () => {
    svc = await startApp({ env: { APP_ENV: 'production', RATE_LIMITS_ENABLED: 'true' } });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('/explorer and its assets answer 404 NOT_FOUND', async () => {
    for (const path of [
      '/explorer',
      '/explorer/',
      '/explorer/ui/swagger-ui-bundle.js',
      '/explorer/page/explorer.js',
    ]) {
      const res = await http(`${svc.baseUrl}${path}`);
      expect([path, res.status]).toEqual([path, 404]);
      expectError(res, 404, 'NOT_FOUND');
    }
    // The contract itself is still served.
    expect((await http(`${svc.api}/openapi.json`)).status).toBe(200);
  });
});

describe('the Explorer counts in the per-IP category app-shell (300 a minute)', () => {
  let svc: Running;
  beforeAll(async () => {
    svc = await startApp({ now: '2026-11-22T12:00:00.000Z' });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('page and assets share the ceiling; the 301st request is 429 RATE_LIMITED naming app-shell', async () => {
    const paths = ['/explorer', '/explorer/page/explorer.css', '/explorer/ui/favicon-16x16.png'];
    // The 300 that fill the minute, 16 at a time through a lean client (their order does not
    // matter); the 301st alone.
    const client = jsonClient(16);
    const statuses = await burst(
      300,
      async (i) =>
        (await client.send(`${svc.baseUrl}${paths[i % paths.length]}`, 'GET', {})).status,
    );
    client.close();
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    const refused = await http(`${svc.baseUrl}/explorer/ui/swagger-ui.css`);
    const err = expectError(refused, 429, 'RATE_LIMITED');
    expect(err.details).toMatchObject({ limit_scope: 'ip', limit: 300, category: 'app-shell' });
    expect(refused.headers.get('retry-after')).toBeTruthy();
    // Another category is untouched.
    expect((await http(`${svc.api}/markets?limit=1`)).status).toBe(200);
  });
});
