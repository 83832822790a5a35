import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ManualClock } from '../../src/common/clock/clock.js';
import { burst } from '../support/burst.js';
import { expectContractError, http, startApp, type Running } from '../support/harness.js';
import { jsonClient } from '../support/json-client.js';

const DEPRECATION = '@1778198400'; // 2026-05-08T00:00:00Z
const SUNSET = 'Sat, 08 Aug 2026 00:00:00 GMT';
const LINK = '</api/v1/openapi.json>; rel="successor-version"';

describe('versioning and route lifecycle', () => {
  describe('before the legacy sunset (clock at 2026-07-01)', () => {
    let svc: Running;
    beforeAll(async () => {
      svc = await startApp({ now: '2026-07-01T00:00:00Z' });
    });
    afterAll(async () => {
      await svc.close();
    });

    it('GET /openapi.json redirects (308) to /api/v1/openapi.json with the deprecation headers', async () => {
      const res = await http(`${svc.baseUrl}/openapi.json`);
      expect(res.status).toBe(308);
      expect(res.headers.get('location')).toBe('/api/v1/openapi.json');
      expect(res.headers.get('deprecation')).toBe(DEPRECATION);
      expect(res.headers.get('sunset')).toBe(SUNSET);
      expect(res.headers.get('link')).toBe(LINK);
      expect(res.headers.get('svc-api-version')).toBe('v1');
      expect(res.headers.get('x-request-id')).toMatch(/^req_/);
      expect(res.text).toBe('');
    });

    it('following the redirect yields the contract', async () => {
      const first = await http(`${svc.baseUrl}/openapi.json`);
      const next = await http(new URL(first.headers.get('location') ?? '', svc.baseUrl).href);
      expect(next.status).toBe(200);
      expect(next.body.openapi).toBe('3.1.0');
    });

    it('stable operations carry no deprecation headers, and every response says Svc-API-Version: v1', async () => {
      for (const path of [
        '/markets',
        '/openapi.json',
        '/openapi/v1.json',
        '/changelog',
        '/health',
      ]) {
        const res = await http(`${svc.api}${path}`);
        expect([path, res.status]).toEqual([path, 200]);
        expect(res.headers.get('svc-api-version')).toBe('v1');
        expect(res.headers.get('deprecation')).toBeNull();
        expect(res.headers.get('sunset')).toBeNull();
        expect(res.headers.get('link')).toBeNull();
      }
    });

    it('the Deprecation and Sunset values are the documented dates', () => {
      expect(new Date(Number(DEPRECATION.slice(1)) * 1000).toISOString()).toBe(
        '2026-05-08T00:00:00.000Z',
      );
      expect(new Date(SUNSET).toISOString()).toBe('2026-08-08T00:00:00.000Z');
    });
  });

  describe('at and after the sunset', () => {
    let svc: Running;
    beforeAll(async () => {
      svc = await startApp(); // the harness clock: 2026-11-22
    });
    afterAll(async () => {
      await svc.close();
    });

    it('GET /openapi.json answers 410 SUNSET with the successor Link and the deprecation headers', async () => {
      const res = await http(`${svc.baseUrl}/openapi.json`);
      const err = expectContractError(res, 410, 'SUNSET');
      expect(err.details).toEqual({ sunset: '2026-08-08', successor: '/api/v1/openapi.json' });
      expect(res.headers.get('link')).toBe(LINK);
      expect(res.headers.get('deprecation')).toBe(DEPRECATION);
      expect(res.headers.get('sunset')).toBe(SUNSET);
      expect(res.headers.get('location')).toBeNull();
    });

    it('a request past its sunset still counts against its per-IP category (general: 600 a minute)', async () => {
      (svc.clock as ManualClock).advance(60_000); // a fresh minute
      // The 600 that fill the minute, 16 at a time through a lean client (their order does not
      // matter); the 601st alone.
      const client = jsonClient(16);
      const statuses = await burst(
        600,
        async () => (await client.send(`${svc.baseUrl}/openapi.json`, 'GET', {})).status,
      );
      client.close();
      expect(statuses).toEqual(new Array(600).fill(410));
      const err = expectContractError(
        await http(`${svc.baseUrl}/openapi.json`),
        429,
        'RATE_LIMITED',
      );
      expect(err.details).toMatchObject({ limit_scope: 'ip', category: 'general', limit: 600 });
      // The same category: /health is refused too for the rest of the minute.
      expectContractError(await http(`${svc.api}/health`), 429, 'RATE_LIMITED');
      (svc.clock as ManualClock).advance(60_000);
    });

    it('the successor keeps working', async () => {
      expect((await http(`${svc.api}/openapi.json`)).status).toBe(200);
    });
  });

  describe('the sunset boundary follows the service clock', () => {
    let svc: Running;
    beforeAll(async () => {
      svc = await startApp({ now: '2026-08-07T23:59:59.000Z' });
    });
    afterAll(async () => {
      await svc.close();
    });

    it('one second before the sunset redirects; at the sunset instant it is gone', async () => {
      expect((await http(`${svc.baseUrl}/openapi.json`)).status).toBe(308);
      (svc.clock as ManualClock).advance(999);
      expect((await http(`${svc.baseUrl}/openapi.json`)).status).toBe(308);
      (svc.clock as ManualClock).advance(1);
      expectContractError(await http(`${svc.baseUrl}/openapi.json`), 410, 'SUNSET');
    });
  });
});
