import { afterAll, afterEach, beforeAll } from '@jest/globals';
import { LockSession } from '../../src/modules/cluster/lock-session.js';
import { startServices, type Services } from './services.js';

const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };

export interface LockSessions {
  /** A new lock session on the file's PostgreSQL, closed after the test. */
  open(applicationName: string, queryTimeoutMs?: number): LockSession;
}

/**
 * For a spec file about lock sessions on a real PostgreSQL 15: starts a throwaway PostgreSQL for
 * the file (beforeAll), closes every session a test opened (afterEach) and stops the server
 * (afterAll). Call it at the top level of the spec file.
 */
export function useLockSessions(): LockSessions {
  let services: Services | undefined;
  const sessions: LockSession[] = [];
  beforeAll(async () => {
    services = await startServices();
  }, 120_000);
  afterEach(async () => {
    await Promise.all(sessions.splice(0).map((s) => s.close()));
  });
  afterAll(async () => {
    await services?.stop();
  }, 60_000);
  return {
    open(applicationName, queryTimeoutMs = 5_000) {
      if (!services)
        throw new Error('useLockSessions: PostgreSQL is not started (call it at the top level)');
      const s = new LockSession({
        databaseUrl: services.databaseUrl,
        applicationName,
        queryTimeoutMs,
        log: quiet,
      });
      sessions.push(s);
      return s;
    },
  };
}
