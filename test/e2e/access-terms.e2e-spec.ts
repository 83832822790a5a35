import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  asSession,
  createKey,
  createKeyRaw,
  login,
  startAccessApp,
  TRADER,
} from '../support/access.js';
import { expectError, type Running } from '../support/harness.js';

const accept = (svc: Running, token: string, version: string) =>
  asSession(token, `${svc.api}/developer-terms/accept`, { method: 'POST', json: { version } });
const keyCount = async (svc: Running, token: string) =>
  (await asSession(token, `${svc.api}/api-keys`)).body.data.length as number;

describe('developer terms: off by default', () => {
  let svc: Running;
  beforeAll(async () => {
    svc = await startAccessApp();
  });
  afterAll(async () => {
    await svc.close();
  });

  it('DEVELOPER_TERMS_REQUIRED defaults to false: keys are created without an acceptance', async () => {
    const session = await login(svc, TRADER);
    const status = await asSession(session, `${svc.api}/developer-terms`);
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({
      version: '2026-07-17',
      required: false,
      accepted: false,
      accepted_at: null,
      binding: false,
    });
    await createKey(svc, session, { name: 'no-terms-needed' });
  });
});

describe('developer terms: DEVELOPER_TERMS_REQUIRED=true', () => {
  let dataDir: string;
  let svc: Running | undefined;
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'svc-e2e-terms-'));
  });
  afterAll(async () => {
    await svc?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('key creation is 403 TERMS_ACCEPTANCE_REQUIRED until the current version is accepted', async () => {
    svc = await startAccessApp({ dataDir, env: { DEVELOPER_TERMS_REQUIRED: 'true' } });
    const session = await login(svc, TRADER);
    const refused = await createKeyRaw(svc, session, { name: 'early', environment: 'live' });
    const err = expectError(refused, 403, 'TERMS_ACCEPTANCE_REQUIRED');
    expect(err.details.version).toBe('2026-07-17');
    expect(await keyCount(svc, session)).toBe(0);

    const wrong = expectError(
      await accept(svc, session, '2025-01-01'),
      422,
      'TERMS_VERSION_NOT_CURRENT',
    );
    expect(wrong.details.current_version).toBe('2026-07-17');
    expectError(await accept(svc, session, 'latest'), 400, 'VALIDATION_FAILED');
    expectError(
      await createKeyRaw(svc, session, { name: 'still-early', environment: 'live' }),
      403,
      'TERMS_ACCEPTANCE_REQUIRED',
    );

    const ok = await accept(svc, session, '2026-07-17');
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({
      version: '2026-07-17',
      required: true,
      accepted: true,
      accepted_at: '2026-11-22T12:00:00.000Z',
      binding: false,
    });
    // Accepting again is harmless and keeps the first acceptance.
    expect((await accept(svc, session, '2026-07-17')).body.accepted_at).toBe(
      '2026-11-22T12:00:00.000Z',
    );
    await createKey(svc, session, { name: 'after-acceptance' });
    expect(await keyCount(svc, session)).toBe(1);
    // Acceptance is per user.
    const admin = await login(svc, 'admin@sandbox.test');
    expectError(
      await createKeyRaw(svc, admin, { name: 'admin-early', environment: 'live' }),
      403,
      'TERMS_ACCEPTANCE_REQUIRED',
    );
    await svc.close({ keepData: true });
    svc = undefined;
  });

  it('a new API_TERMS_VERSION asks again; accepting the old version is 422 TERMS_VERSION_NOT_CURRENT', async () => {
    svc = await startAccessApp({
      dataDir,
      env: { DEVELOPER_TERMS_REQUIRED: 'true', API_TERMS_VERSION: '2026-12-01' },
    });
    const session = await login(svc, TRADER);
    const status = await asSession(session, `${svc.api}/developer-terms`);
    expect(status.body).toMatchObject({ version: '2026-12-01', required: true, accepted: false });
    const err = expectError(
      await createKeyRaw(svc, session, { name: 'new-version', environment: 'live' }),
      403,
      'TERMS_ACCEPTANCE_REQUIRED',
    );
    expect(err.details.version).toBe('2026-12-01');
    const old = expectError(
      await accept(svc, session, '2026-07-17'),
      422,
      'TERMS_VERSION_NOT_CURRENT',
    );
    expect(old.details.current_version).toBe('2026-12-01');
    expect(await keyCount(svc, session)).toBe(1);

    expect((await accept(svc, session, '2026-12-01')).body.accepted).toBe(true);
    await createKey(svc, session, { name: 'new-version' });
    expect(await keyCount(svc, session)).toBe(2);
  });
});
