import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import pg from 'pg';
import {
  PLATFORM_ENTITIES,
  PLATFORM_MIGRATIONS,
  openDatabase,
  postgresOptions,
} from '../../src/database/databases.js';
import { ROOT } from './process.js';

/**
 * `npm run services` as a test fixture: a throwaway PostgreSQL cluster and redis-server
 * (scripts/services.js), their URLs, and `stop()` (SIGTERM: both servers stop, their files go).
 */
export interface Services {
  databaseUrl: string;
  redisUrl: string;
  /** The script itself, for tests of how it stops. */
  child: ChildProcess;
  stop(): Promise<void>;
}

/** `root`: the checkout (a compiled bench runs from dist-bench/ and passes the working directory). */
export async function startServices(timeoutMs = 90_000, root = ROOT): Promise<Services> {
  // In a Jest run, clusters are copies of one initdb kept in the run's directory (global-setup.js).
  const runRoot = process.env.SVC_E2E_TEMPLATE_ROOT;
  const cache = runRoot === undefined || runRoot === '' ? [] : ['--initdb-cache', runRoot];
  const child = spawn(process.execPath, [join(root, 'scripts', 'services.js'), ...cache], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const db = /^DATABASE_URL=(\S+)$/m.exec(out);
    const redis = /^REDIS_URL=(\S+)$/m.exec(out);
    if (db !== null && redis !== null) {
      return {
        databaseUrl: db[1],
        redisUrl: redis[1],
        child,
        stop: async () => {
          if (child.exitCode !== null || child.signalCode !== null) return;
          const gone = new Promise((r) => child.once('exit', r));
          child.kill('SIGTERM');
          await gone;
        },
      };
    }
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`npm run services did not come up: ${err}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** {@link startServices} with the platform schema migrated as the service migrates it. */
export interface PlatformServices extends Services {
  /** A plain client on the database, for what a test does behind the service's back. */
  admin: pg.Client;
}

export async function startPlatformServices(): Promise<PlatformServices> {
  const services = await startServices();
  try {
    const platform = await openDatabase(
      postgresOptions('platform', services.databaseUrl, PLATFORM_ENTITIES, PLATFORM_MIGRATIONS),
    );
    await platform.destroy();
    const admin = new pg.Client({ connectionString: services.databaseUrl });
    await admin.connect();
    return {
      ...services,
      admin,
      stop: async () => {
        await admin.end();
        await services.stop();
      },
    };
  } catch (err) {
    await services.stop();
    throw err;
  }
}
