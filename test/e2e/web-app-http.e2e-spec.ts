import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { createKey, sessionFor } from '../support/keys.js';
import { http, startApp, type Running } from '../support/harness.js';
import { WEB_APP_DIR } from '../../src/modules/web-app/web-app.static.js';

// The demo app as the service serves it (dist/app, built by `npm run build`).
describe('/app: the demo web app over HTTP', () => {
  let svc: Running;
  let page: string;

  beforeAll(async () => {
    expect(existsSync(`${WEB_APP_DIR}index.html`)).toBe(true); // npm run build ran
    svc = await startApp({ env: { RATE_LIMITS_ENABLED: 'false' } });
  });
  afterAll(() => svc.close());

  it('GET /app and /app/ serve the page as HTML with a self-only CSP', async () => {
    for (const path of ['/app', '/app/']) {
      const res = await http(`${svc.baseUrl}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.text).toContain('<div id="root"></div>');
      const csp = res.headers.get('content-security-policy')!;
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("connect-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
      expect(csp).not.toMatch(/https?:/);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      page = res.text;
    }
  });

  it("the page's script, stylesheet and icon load from /app/ with their types; hashed assets are cached for good", async () => {
    const refs = [...page.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    const script = refs.find((r) => r.endsWith('.js'))!;
    const style = refs.find((r) => r.endsWith('.css'))!;
    const icon = refs.find((r) => r.endsWith('.svg'))!;
    expect([script, style, icon].every((r) => r.startsWith('/app/'))).toBe(true);
    const js = await http(`${svc.baseUrl}${script}`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/^(application|text)\/javascript/);
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const css = await http(`${svc.baseUrl}${style}`);
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    const svg = await http(`${svc.baseUrl}${icon}`);
    expect(svg.status).toBe(200);
    expect(svg.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
  });

  it('a deep link (/app/markets/xyz, /app/portfolio) serves the page; a missing asset is a 404, not the page', async () => {
    for (const path of ['/app/markets/xyz', '/app/portfolio', '/app/markets/mkt_1?tab=book']) {
      const res = await http(`${svc.baseUrl}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.text).toBe(page);
    }
    const missing = await http(`${svc.baseUrl}/app/assets/missing-abc123.js`);
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('NOT_FOUND');
    // Outside /app nothing changed: an unknown path is still the API's 404.
    const other = await http(`${svc.baseUrl}/application`);
    expect(other.status).toBe(404);
  });

  it("the page's own origin may send credentialed writes (same origin); another origin is still refused", async () => {
    const token = await sessionFor(svc.api);
    const key = await createKey(svc.api, token, {
      environment: 'test',
      scopes: ['wallet:read', 'wallet:write'],
      acknowledge_write_scopes: true,
    });
    const fund = (origin: string) =>
      http(`${svc.api}/sandbox/wallet/fund`, {
        method: 'POST',
        headers: { origin, 'x-api-key': key.key },
        json: { amount_cents: 100 },
      });
    const same = await fund(svc.baseUrl);
    expect(same.status).toBe(201);
    expect(same.headers.get('access-control-allow-origin')).toBe(svc.baseUrl);
    // Same host, another port: another origin.
    const other = await fund(
      svc.baseUrl.replace(/:(\d+)$/, (_m, p: string) => `:${Number(p) + 1}`),
    );
    expect(other.status).toBe(403);
    expect(other.body.error.code).toBe('CORS_ORIGIN_REJECTED');
    const wallet = await http(`${svc.api}/wallet`, { headers: { 'x-api-key': key.key } });
    expect(wallet.body.balance_cents).toBe(1_000_000 + 100); // the refused one changed nothing
  });
});
