// Jest's global setup: one directory for the run's DATA_DIR templates (test/support/
// data-dir-template.ts), named in the environment the workers inherit; global-teardown.js
// removes it. With TEST_DATABASE=postgres (every e2e file on PostgreSQL), or when a file of the
// `e2e-pg` project runs (global-setup-postgres.js), it also starts the run's one PostgreSQL
// cluster and redis-server (scripts/services.js) and names them to the workers
// (SVC_E2E_DATABASE_URL, SVC_E2E_REDIS_URL): every suite file shares them, instead of each paying
// for an initdb (a fresh database per app boot and a key prefix per database keep the boots apart).
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SERVICES = fileURLToPath(new URL('../../scripts/services.js', import.meta.url));

export default async function globalSetup() {
  process.env.SVC_E2E_TEMPLATE_ROOT = mkdtempSync(join(tmpdir(), 'svc-e2e-templates-'));
  if (process.env.TEST_DATABASE === 'postgres') await startRunServices();
}

/** Starts the run's PostgreSQL and Redis, unless they run already (or were given). */
export async function startRunServices() {
  if (process.env.SVC_E2E_DATABASE_URL) return;
  const { child, databaseUrl, redisUrl } = await startServices();
  // Read by global-teardown.js, which runs in this same process.
  globalThis.__svcE2eServices = child;
  process.env.SVC_E2E_DATABASE_URL = databaseUrl;
  process.env.SVC_E2E_REDIS_URL = redisUrl;
}

function startServices() {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SERVICES], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      reject(new Error(`npm run services did not come up in 120 s: ${err}`));
    }, 120_000);
    child.stderr.on('data', (c) => (err += c.toString()));
    child.stdout.on('data', (c) => {
      out += c.toString();
      const db = /^DATABASE_URL=(\S+)$/m.exec(out);
      const redis = /^REDIS_URL=(\S+)$/m.exec(out);
      if (db !== null && redis !== null) {
        clearTimeout(timer);
        resolve({ child, databaseUrl: db[1], redisUrl: redis[1] });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`npm run services exited (${code}): ${err}`));
    });
  });
}
