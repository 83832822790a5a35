import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startApp, type Running } from '../support/harness.js';
import { ORDER_SCOPES, trader } from '../support/orders.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const EXAMPLE = 'examples/ci-world.test.mjs';

/** Every subtest name the example declares (`test('...', ...)`), in order. */
function declaredTests(): string[] {
  const src = readFileSync(`${ROOT}${EXAMPLE}`, 'utf8');
  return [...src.matchAll(/^test\('([^']+)'/gm)].map((m) => m[1]);
}

function runExample(
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--test', '--test-reporter=tap', EXAMPLE],
      { cwd: ROOT, env: { ...process.env, ...env }, timeout: 120_000 },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/**
 * The README's CI example (examples/ci-world.test.mjs) run as a CI job would run it, against the
 * real app: world, seeded trade, REJECT and RATE_LIMIT scenarios, webhook failures on the world
 * clock, delete. So the example cannot rot: it must exit 0 with every subtest passing.
 */
describe('examples/ci-world.test.mjs against a running service', () => {
  let svc: Running;
  let key: string;

  beforeAll(async () => {
    svc = await startApp({
      env: {
        SANDBOX_CLOCK_CONTROL: 'true',
        // A world's feed steps once per interval of world time passed, up to 100 steps per clock
        // call: at 1 s, the example's moves of its clock (60 s, then the retry schedule's 30 s to
        // 6 h) stepped every market about 490 times, most of the run. At 60 s it is about 170:
        // the trade still follows a step of the seeded path, every retry still waits on the world
        // clock.
        SANDBOX_FEED_INTERVAL_MS: '60000',
        RATE_LIMITS_ENABLED: 'false',
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
        WEBHOOK_POLL_MS: '50',
      },
    });
    const t = await trader(svc, 'ci@examples.test', {
      scopes: [...ORDER_SCOPES, 'webhooks:read', 'webhooks:write'],
    });
    key = t.key;
  });
  afterAll(async () => {
    await svc.close();
  });

  it('exits 0 and its TAP output lists every subtest passing', async () => {
    const names = declaredTests();
    expect(names.length).toBe(6);
    const run = await runExample({ SVC_BASE_URL: svc.baseUrl, SVC_TEST_KEY: key });
    if (run.code !== 0) console.error(run.stdout, run.stderr);
    expect(run.code).toBe(0);
    for (const name of names)
      expect(run.stdout).toContain(`ok ${names.indexOf(name) + 1} - ${name}`);
    expect(run.stdout).not.toMatch(/^not ok/m);
    expect(run.stdout).toMatch(new RegExp(`^# pass ${names.length}$`, 'm'));
    expect(run.stdout).toMatch(/^# fail 0$/m);
    // The example removed its world.
    const worlds = await fetch(`${svc.api}/sandbox/worlds`, { headers: { 'x-api-key': key } });
    expect(((await worlds.json()) as { data: unknown[] }).data).toEqual([]);
  });

  it('without SVC_TEST_KEY it fails, naming the variable', async () => {
    const run = await runExample({ SVC_BASE_URL: svc.baseUrl, SVC_TEST_KEY: '' });
    expect(run.code).not.toBe(0);
    expect(run.stdout).toContain('set SVC_TEST_KEY');
  });
});
