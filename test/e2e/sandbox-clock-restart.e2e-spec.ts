import { afterAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectContractError, http, startApp, type Running } from '../support/harness.js';
import { runToExit, startService, type ServiceProcess } from '../support/process.js';
import { as, trader } from '../support/orders.js';

/**
 * The sandbox clock control's offset survives a restart (issue 4, found by a fuzzer): ids sort by
 * creation time, and a clock that went back after a restart listed new ledger rows after older
 * ones, and sandbox funding answered with the previous row instead of its own.
 */
describe('sandbox clock across a restart', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-clock-restart-'));
  const env = {
    SANDBOX_CLOCK_CONTROL: 'true',
    SANDBOX_FEED_INTERVAL_MS: '0',
    LOG_LEVEL: 'warn',
  };
  let svc: ServiceProcess | undefined;

  afterAll(async () => {
    await svc?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps the clock ahead after a restart; funding answers with its own ledger row, newest first', async () => {
    svc = await startService({ dataDir, env });
    const t = await trader(svc, 'trader@sandbox.test', {
      scopes: ['wallet:read', 'wallet:write'],
    });
    const fund = (cents: number, requestId: string) =>
      as(t, `${svc!.api}/sandbox/wallet/fund`, {
        method: 'POST',
        json: { amount_cents: cents },
        headers: { 'x-request-id': requestId },
      });

    const moved = await http(`${svc.api}/sandbox/clock`, {
      method: 'POST',
      json: { advance_seconds: 3600 },
    });
    expect(moved.status).toBe(200);
    const ahead = Date.parse(moved.body.now as string);
    expect(ahead - Date.now()).toBeGreaterThan(3_500_000);
    expect(JSON.parse(readFileSync(join(dataDir, 'clock.json'), 'utf8'))).toEqual({
      offset_ms: 3_600_000,
    });
    const first = await fund(111, 'fund-before-restart');
    expect(first.status).toBe(201);
    expect(first.body.transaction).toMatchObject({ amount_cents: 111, type: 'FUNDING' });

    await svc.stop('SIGTERM');
    svc = await startService({ dataDir, env });

    const second = await fund(222, 'fund-after-restart');
    expect(second.status).toBe(201);
    expect(second.body.transaction).toMatchObject({
      type: 'FUNDING',
      amount_cents: 222,
      reference_id: 'fund-after-restart',
      balance_after_cents: second.body.wallet.balance_cents,
    });
    // Still an hour ahead of the wall clock: the new row is the newest.
    expect(Date.parse(second.body.transaction.created_at as string) - Date.now()).toBeGreaterThan(
      3_500_000,
    );
    const page = await as(t, `${svc.api}/transactions/cursor?limit=2`);
    expect(page.status).toBe(200);
    expect(page.body.data.map((r: { amount_cents: number }) => r.amount_cents)).toEqual([222, 111]);

    // Without the control the file is ignored: the wall clock again, and a warning says so.
    await svc.stop('SIGTERM');
    svc = await startService({ dataDir, env: { ...env, SANDBOX_CLOCK_CONTROL: 'false' } });
    const third = await fund(333, 'fund-without-control');
    expect(third.status).toBe(201);
    expect(
      Math.abs(Date.parse(third.body.transaction.created_at as string) - Date.now()),
    ).toBeLessThan(60_000);
    expect(svc.stdout()).toContain('clock.json is ignored');
    expect(existsSync(join(dataDir, 'clock.json'))).toBe(true);
  });

  it('refuses to start on a clock.json it cannot read, rather than move the clock back', async () => {
    await svc?.stop('SIGTERM');
    svc = undefined;
    const dir = mkdtempSync(join(tmpdir(), 'svc-clock-bad-'));
    try {
      writeFileSync(join(dir, 'clock.json'), '{"offset_ms": -5}');
      const exit = await runToExit({ dataDir: dir, env });
      expect(exit.code).not.toBe(0);
      expect(exit.stdout + exit.stderr).toContain('clock.json');
      expect(existsSync(join(dir, 'clock.json'))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('sandbox clock control: at most ten years ahead in all', () => {
  let svc: Running;
  afterAll(async () => {
    await svc?.close();
  });

  it('refuses an advance past ten years with 400, moving nothing', async () => {
    svc = await startApp({ env: { SANDBOX_CLOCK_CONTROL: 'true' } });
    const advance = (s: number) =>
      http(`${svc.api}/sandbox/clock`, { method: 'POST', json: { advance_seconds: s } });
    for (let i = 0; i < 10; i++) expect((await advance(31_536_000)).status).toBe(200);
    const before = svc.clock.now();
    const err = expectContractError(await advance(31_536_000), 400, 'VALIDATION_FAILED');
    expect(err.details.fields).toEqual([
      { field: 'advance_seconds', message: expect.stringContaining('ten years') },
    ]);
    expect(svc.clock.now()).toBe(before);
    expect((await advance(1)).status).toBe(200);
  });
});
