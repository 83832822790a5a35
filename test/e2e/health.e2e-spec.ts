import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { expectContractError, http, startApp, type Running } from '../support/harness.js';

describe('health', () => {
  let svc: Running;
  beforeAll(async () => {
    svc = await startApp();
  });
  afterAll(async () => {
    await svc.close();
  });

  it('GET /api/v1/health is liveness: 200 {status: ok}', async () => {
    const res = await http(`${svc.api}/health`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
    expect(res.headers.get('svc-api-version')).toBe('v1');
  });

  it('GET /api/v1/health/ready checks the three databases', async () => {
    const res = await http(`${svc.api}/health/ready`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'ready',
      checks: { platform: 'ok', live: 'ok', paper: 'ok' },
    });
  });

  it('needs no credential, and a bogus one does not change the answer', async () => {
    const bogus: Record<string, string>[] = [
      { 'x-api-key': 'svc_live_bogus' },
      { authorization: 'Bearer nope' },
    ];
    for (const headers of bogus) {
      const res = await http(`${svc.api}/health/ready`, { headers });
      expect(res.status).toBe(200);
      expect(res.body.status).toBe('ready');
    }
  });

  // Last: it takes the paper database down for good.
  it('readiness answers 503 SERVICE_UNAVAILABLE naming the database that is down', async () => {
    await svc.app.get<DataSource>(getDataSourceToken('paper'), { strict: false }).destroy();
    const res = await http(`${svc.api}/health/ready`);
    const err = expectContractError(res, 503, 'SERVICE_UNAVAILABLE');
    expect(err.details).toEqual({ checks: { platform: 'ok', live: 'ok', paper: 'unavailable' } });
    // Liveness is about the process, not its dependencies.
    expect((await http(`${svc.api}/health`)).status).toBe(200);
  });
});
