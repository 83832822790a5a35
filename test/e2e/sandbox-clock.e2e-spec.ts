import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectContractError, http, startApp, type Running } from '../support/harness.js';

describe('sandbox clock control', () => {
  describe('with SANDBOX_CLOCK_CONTROL=true', () => {
    let svc: Running;
    beforeAll(async () => {
      svc = await startApp({ env: { SANDBOX_CLOCK_CONTROL: 'true' } });
    });
    afterAll(async () => {
      await svc.close();
    });

    const advance = (body: unknown) =>
      http(`${svc.api}/sandbox/clock`, { method: 'POST', json: body });

    it('is in the OpenAPI document when on', async () => {
      const doc = (await http(`${svc.api}/openapi.json`)).body;
      expect(Object.keys(doc.paths)).toContain('/api/v1/sandbox/clock');
    });

    it('moves the service clock forward and answers {now}', async () => {
      const start = svc.clock.now();
      expect(new Date(start).toISOString()).toBe('2026-11-22T12:00:00.000Z');

      const hour = await advance({ advance_seconds: 3600 });
      expect(hour.status).toBe(200);
      expect(hour.body).toEqual({ now: '2026-11-22T13:00:00.000Z' });
      expect(hour.headers.get('svc-api-version')).toBe('v1');
      expect(svc.clock.now()).toBe(start + 3_600_000);

      expect((await advance({ advance_seconds: 0 })).body).toEqual({
        now: '2026-11-22T13:00:00.000Z',
      });
      expect((await advance({ advance_seconds: 61 })).body).toEqual({
        now: '2026-11-22T13:01:01.000Z',
      });
    });

    it('refuses a negative, fractional, missing, textual or too large advance, moving nothing', async () => {
      const before = svc.clock.now();
      for (const body of [
        { advance_seconds: -1 },
        { advance_seconds: 1.5 },
        {},
        { advance_seconds: '3600' },
        { advance_seconds: null },
        { advance_seconds: 31_536_001 },
      ]) {
        const err = expectContractError(await advance(body), 400, 'VALIDATION_FAILED');
        expect(err.details.fields).toEqual([
          { field: 'advance_seconds', message: expect.any(String) },
        ]);
      }
      expect(svc.clock.now()).toBe(before);
    });
  });

  describe('the clock drives time rules: a sunset passes when the clock is moved', () => {
    let svc: Running;
    beforeAll(async () => {
      svc = await startApp({
        env: { SANDBOX_CLOCK_CONTROL: 'true' },
        now: '2026-08-07T23:30:00.000Z',
      });
    });
    afterAll(async () => {
      await svc.close();
    });

    it('legacy /openapi.json redirects before, and is gone after, an advance past 2026-08-08', async () => {
      expect((await http(`${svc.baseUrl}/openapi.json`)).status).toBe(308);
      const moved = await http(`${svc.api}/sandbox/clock`, {
        method: 'POST',
        json: { advance_seconds: 1800 },
      });
      expect(moved.body).toEqual({ now: '2026-08-08T00:00:00.000Z' });
      expectContractError(await http(`${svc.baseUrl}/openapi.json`), 410, 'SUNSET');
    });
  });

  describe('without SANDBOX_CLOCK_CONTROL', () => {
    let svc: Running;
    beforeAll(async () => {
      svc = await startApp();
    });
    afterAll(async () => {
      await svc.close();
    });

    it('answers 404 NOT_FOUND whatever the body, and the clock does not move', async () => {
      const before = svc.clock.now();
      for (const body of [{ advance_seconds: 3600 }, { advance_seconds: -1 }, {}, { x: 1 }]) {
        const res = await http(`${svc.api}/sandbox/clock`, { method: 'POST', json: body });
        expectContractError(res, 404, 'NOT_FOUND');
      }
      const noBody = await http(`${svc.api}/sandbox/clock`, { method: 'POST' });
      expectContractError(noBody, 404, 'NOT_FOUND');
      expect(svc.clock.now()).toBe(before);
      // The route is there for world keys (they move their world's clock whatever the control
      // says; worlds-clock.e2e-spec), so other methods are 405 naming POST and the contract lists
      // it, saying that outside a world it answers 404 unless SANDBOX_CLOCK_CONTROL is on.
      for (const method of ['GET', 'PUT', 'DELETE']) {
        const res = await http(`${svc.api}/sandbox/clock`, { method });
        expectContractError(res, 405, 'METHOD_NOT_ALLOWED');
        expect(res.headers.get('allow')).toBe('POST');
      }
      const doc = (await http(`${svc.api}/openapi.json`)).body;
      expect(doc.paths['/api/v1/sandbox/clock'].post.description).toContain(
        'otherwise 404 NOT_FOUND',
      );
    });

    it('is off unless the value is exactly true-ish: "false" keeps it off', async () => {
      const off = await startApp({ env: { SANDBOX_CLOCK_CONTROL: 'false' } });
      try {
        const res = await http(`${off.api}/sandbox/clock`, {
          method: 'POST',
          json: { advance_seconds: 1 },
        });
        expectContractError(res, 404, 'NOT_FOUND');
      } finally {
        await off.close();
      }
    });
  });
});
