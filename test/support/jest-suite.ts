// An e2e suite file (test/e2e/suites/*.e2e-suite.ts) runs several case files in one Jest test file,
// so they share one module registry: Nest, TypeORM, Fastify and the service's own modules are
// linked and evaluated once per suite instead of once per case file (about 2.4 s of CPU each).
//
// Each case file is imported inside its own describe block named after it, as if it were still a
// file of its own: its top-level beforeAll/afterAll run around its own tests only (its app is
// closed before the next case file boots one), a top-level beforeEach never reaches another case
// file's tests, and a failing hook fails that case file's tests only.
//
// `describe` takes a synchronous callback and an ES module can only be imported asynchronously, so
// the block is opened with an empty describe and then made jest-circus's current block again for
// the time of the import (a suite file awaits each import at its top level, before Jest runs any
// test). jest-circus keeps that state on the test environment's global under a private symbol.
import { afterAll, describe } from '@jest/globals';
import { runAsSqlitePassOnly } from './pass-guard.js';
import { SQLITE_PASS_ONLY } from './sqlite-pass-only.js';

/** The PostgreSQL pass (its setup file sets TEST_DATABASE; test-database.ts reads it the same way). */
const testDatabaseIsPostgres = (): boolean => process.env.TEST_DATABASE === 'postgres';

interface DescribeBlock {
  type: 'describeBlock';
  name: string;
  children: (DescribeBlock | TestEntry)[];
  hooks: { fn: CircusFn }[];
  parent?: DescribeBlock;
}
type CircusFn = (...args: unknown[]) => unknown;
interface TestEntry {
  type: 'test';
  name: string;
  fn: CircusFn;
}
interface CircusState {
  currentDescribeBlock: DescribeBlock;
  hasStarted: boolean;
}

function circusState(): CircusState {
  const sym = Object.getOwnPropertySymbols(globalThis).find(
    (s) => s.description === 'JEST_STATE_SYMBOL',
  );
  const state = sym === undefined ? undefined : (globalThis as Record<symbol, unknown>)[sym];
  if (typeof state !== 'object' || state === null || !('currentDescribeBlock' in state)) {
    // A Jest upgrade that moved its state: fail the suite loudly rather than mis-nest its tests.
    throw new Error('jest-suite: jest-circus state not found on the test global (Jest changed?)');
  }
  return state as CircusState;
}

/**
 * Registers `fn` as an afterAll of the whole test file, whichever describe block (a case file's,
 * in a suite file) is collecting when it is called: it runs once, after every case file. Call it
 * while tests are collected (from a module's top level), not from a test.
 */
export function afterFile(fn: () => Promise<void>): void {
  const state = circusState();
  if (state.hasStarted) throw new Error('jest-suite: afterFile called after the tests started');
  const current = state.currentDescribeBlock;
  let root = current;
  while (root.parent !== undefined) root = root.parent;
  state.currentDescribeBlock = root;
  try {
    afterAll(fn);
  } finally {
    state.currentDescribeBlock = current;
  }
}

/**
 * Registers a case file's tests under a describe block named `name`: `load` imports it. Await each
 * call in order at the suite file's top level.
 *
 * A case file listed in sqlite-pass-only.js is not imported in the PostgreSQL pass (it would run
 * there unchanged, on SQLite files); in the SQLite pass its tests and hooks run as its own, so a
 * boot on the pass database among them throws (assertNotSqlitePassOnly).
 */
export async function caseFile(name: string, load: () => Promise<unknown>): Promise<void> {
  const state = circusState();
  if (state.hasStarted) throw new Error(`jest-suite: ${name} imported after the tests started`);
  const sqlitePassOnly = Object.hasOwn(SQLITE_PASS_ONLY, name);
  if (sqlitePassOnly && testDatabaseIsPostgres()) return;
  const parent = state.currentDescribeBlock;
  describe(name, () => {});
  const block = parent.children.at(-1) as DescribeBlock | undefined;
  if (block?.type !== 'describeBlock' || block.name !== name || block.parent !== parent) {
    throw new Error(`jest-suite: the describe block of ${name} was not where jest-circus puts it`);
  }
  state.currentDescribeBlock = block;
  try {
    await load();
  } finally {
    state.currentDescribeBlock = parent;
  }
  if (block.children.length === 0) throw new Error(`jest-suite: ${name} registered no test`);
  if (sqlitePassOnly) runsAs(name, block);
}

/** Every test and hook of `block`, nested blocks' too, run as case file `name`'s. */
function runsAs(name: string, block: DescribeBlock): void {
  const wrap = (entry: { fn: CircusFn }, what: string) => {
    const fn = entry.fn;
    // A done-callback test or hook (a parameter) would need it passed through: none exists.
    if (fn.length > 0) throw new Error(`jest-suite: ${name}: ${what} takes a done callback`);
    entry.fn = () => runAsSqlitePassOnly(name, fn);
  };
  for (const hook of block.hooks) wrap(hook, `a hook of ${block.name}`);
  for (const child of block.children) {
    if (child.type === 'describeBlock') runsAs(name, child);
    else wrap(child, child.name);
  }
}
