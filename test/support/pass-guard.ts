import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The guard of sqlite-pass-only.js: jest-suite.ts runs a listed case file's tests and hooks as
 * that file's, and the harness's ways onto the pass database ask whether they are in one. No Jest
 * import: test/support/process.ts, which calls it, also serves the benchmarks.
 */
const running = new AsyncLocalStorage<string>();

/** Runs `fn` (a test or hook of a case file listed in sqlite-pass-only.js) as that file's. */
export function runAsSqlitePassOnly<T>(caseFile: string, fn: () => T): T {
  return running.run(caseFile, fn);
}

/**
 * Throws when called from a test or hook of a case file listed in sqlite-pass-only.js: `what` (a
 * boot on the pass database) would make it depend on the pass, so it must leave the list.
 */
export function assertNotSqlitePassOnly(what: string): void {
  const caseFile = running.getStore();
  if (caseFile !== undefined) {
    throw new Error(
      `${caseFile} is in test/support/sqlite-pass-only.js (the PostgreSQL pass leaves it out), ` +
        `but ${what}: take it off that list, so that it runs in both passes`,
    );
  }
}
