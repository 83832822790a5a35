// The in-process benches (reset, lists, rfq) boot the app inside the bench's own process, from
// dist-bench, so they can reach its services; one copy of that boot.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createApp } from '../../src/app.factory.js';
import { AdjustableClock } from '../../src/common/clock/clock.js';
import { loadConfig } from '../../src/config/app-config.js';

export interface InProcessApp {
  app: NestFastifyApplication;
  config: ReturnType<typeof loadConfig>;
  dataDir: string;
  /** Closes the app and removes its DATA_DIR. */
  close(): Promise<void>;
}

/**
 * Boots the app on a fresh DATA_DIR with silent logs, no price feed and no rate limits (`env`
 * adds or overrides variables). The
 * compiled app reads seeds/ and public/ (the Explorer's page) two levels above its modules,
 * dist-bench/ here, so they are copied there first.
 */
export async function startInProcessApp(
  name: string,
  env: Record<string, string> = {},
): Promise<InProcessApp> {
  for (const dir of ['seeds', 'public']) {
    cpSync(new URL(`../../../${dir}`, import.meta.url), new URL(`../../${dir}`, import.meta.url), {
      recursive: true,
    });
  }
  const dataDir = mkdtempSync(join(tmpdir(), `svc-bench-${name}-`));
  const config = loadConfig({
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    PORT: '0',
    SANDBOX_FEED_INTERVAL_MS: '0',
    RATE_LIMITS_ENABLED: 'false',
    ...env,
  });
  const sink = new Writable({ write: (_c, _e, cb) => cb() });
  const created = await createApp({ config, clock: new AdjustableClock(), logStream: sink });
  return {
    app: created.app,
    config,
    dataDir,
    async close() {
      await created.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
