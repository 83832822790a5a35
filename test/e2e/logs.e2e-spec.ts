import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { http, logLines, startApp, type Running } from '../support/harness.js';

const FAKE_KEY = 'svc_live_SUPERSECRETkeyMaterial0123456789';
const FAKE_TEST_KEY = 'svc_test_ANOTHERsecretKEY9876543210';
const FAKE_JWT = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c3JfZmFrZSJ9.c2lnbmF0dXJlc2VjcmV0';
const FAKE_SIGNATURE = 'v1=deadbeefcafebabe0123456789abcdef0123456789abcdef';

describe('structured logs', () => {
  let svc: Running;
  beforeAll(async () => {
    // trace: the most verbose level, so that any code path that logs more shows up here.
    svc = await startApp({ env: { LOG_LEVEL: 'trace' } });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('every line is JSON', () => {
    expect(svc.logs.length).toBeGreaterThan(0);
    for (const l of svc.logs) expect(() => JSON.parse(l)).not.toThrow();
  });

  it('writes one line per request with req_id, method, route, status and duration_ms', async () => {
    const id = 'log-line-test-0001';
    const res = await http(`${svc.api}/markets?limit=2`, { headers: { 'x-request-id': id } });
    expect(res.status).toBe(200);
    const lines = logLines(svc).filter((l) => l.req_id === id && l.msg === 'request');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 30,
      req_id: id,
      method: 'GET',
      route: '/api/v1/markets',
      status: 200,
      duration_ms: expect.any(Number),
    });
    expect(lines[0].duration_ms as number).toBeGreaterThanOrEqual(0);
    expect(typeof lines[0].time).toBe('number');

    const missId = 'log-line-test-0002';
    await http(`${svc.api}/nowhere`, { method: 'DELETE', headers: { 'x-request-id': missId } });
    const miss = logLines(svc).filter((l) => l.req_id === missId && l.msg === 'request');
    expect(miss).toEqual([expect.objectContaining({ method: 'DELETE', status: 404, route: null })]);
  });

  it('never writes an API key, a bearer token, a cookie or a signature', async () => {
    const secretHeaders = {
      'x-api-key': FAKE_KEY,
      authorization: `Bearer ${FAKE_JWT}`,
      cookie: `session=${FAKE_JWT}`,
      'x-svc-signature': FAKE_SIGNATURE,
      'x-svc-timestamp': '1795305600',
    };
    await http(`${svc.api}/markets`, { headers: secretHeaders });
    await http(`${svc.api}/markets/mkt_nope`, {
      headers: { ...secretHeaders, 'x-api-key': FAKE_TEST_KEY },
    });
    await http(`${svc.api}/health`, { headers: secretHeaders });
    await http(`${svc.api}/does-not-exist`, {
      method: 'POST',
      headers: secretHeaders,
      json: { a: 1 },
    });
    await http(`${svc.api}/sandbox/clock`, { method: 'POST', headers: secretHeaders, body: '{' });
    await http(`${svc.baseUrl}/openapi.json`, { headers: secretHeaders });

    const all = svc.logs.join('\n');
    for (const secret of [
      FAKE_KEY,
      FAKE_TEST_KEY,
      FAKE_JWT,
      FAKE_SIGNATURE,
      'SUPERSECRET',
      'ANOTHERsecret',
    ]) {
      expect([secret, all.includes(secret)]).toEqual([secret, false]);
    }
    // Those requests were logged all the same.
    expect(logLines(svc).filter((l) => l.msg === 'request').length).toBeGreaterThanOrEqual(6);
  });
});
