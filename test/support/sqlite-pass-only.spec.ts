import { beforeAll, describe, expect, it } from '@jest/globals';
import { fileURLToPath } from 'node:url';
import { caseFile } from './jest-suite.js';
import { suiteMembership } from './jest-suites.js';
import { assertNotSqlitePassOnly } from './pass-guard.js';
import { SQLITE_PASS_ONLY } from './sqlite-pass-only.js';

const E2E = fileURLToPath(new URL('../e2e', import.meta.url));
const LISTED = 'data-dir.e2e-spec.ts';
const refused = /data-dir\.e2e-spec\.ts is in test\/support\/sqlite-pass-only\.js/;

// A listed case file, as a suite file registers it: its hooks and tests run as that file's.
let inHook: unknown = null;
await caseFile(LISTED, async () => {
  beforeAll(() => {
    try {
      assertNotSqlitePassOnly('a boot in a hook');
    } catch (err) {
      inHook = err;
    }
  });
  it('a boot on the pass database in a listed case file throws, in its hooks and tests, across awaits and timers', async () => {
    expect(String(inHook)).toMatch(refused);
    expect(() => assertNotSqlitePassOnly('it boots an app')).toThrow(refused);
    await new Promise((r) => setTimeout(r, 1));
    expect(() => assertNotSqlitePassOnly('it boots an app')).toThrow(/but it boots an app: take/);
  });
});

// The PostgreSQL pass does not import a listed case file.
let loaded = false;
const pass = process.env.TEST_DATABASE;
process.env.TEST_DATABASE = 'postgres';
try {
  await caseFile(LISTED, async () => {
    loaded = true;
  });
} finally {
  if (pass === undefined) delete process.env.TEST_DATABASE;
  else process.env.TEST_DATABASE = pass;
}

describe('case files of the SQLite pass only', () => {
  it('the PostgreSQL pass does not import one', () => {
    expect(loaded).toBe(false);
  });

  it('outside a listed case file, a boot on the pass database is allowed', () => {
    expect(() => assertNotSqlitePassOnly('it boots an app')).not.toThrow();
  });

  it('every listed case file exists and is in a suite, and no suite is left without a case file in the PostgreSQL pass', () => {
    const { suites, cases } = suiteMembership(E2E);
    const listed = Object.keys(SQLITE_PASS_ONLY);
    expect(listed.filter((c) => !cases.includes(c))).toEqual([]);
    const emptied = Object.entries(suites)
      .filter(([, imported]) => imported.every((c) => listed.includes(c)))
      .map(([suite]) => suite);
    expect(emptied).toEqual([]);
    for (const reason of Object.values(SQLITE_PASS_ONLY)) expect(reason.length).toBeGreaterThan(10);
  });
});
