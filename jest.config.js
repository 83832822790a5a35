// Jest runs the TypeScript sources as native ESM (NestJS 12 is ESM-only), transformed by SWC.
import { fileURLToPath } from 'node:url';
import { common } from './test/support/jest-common.js';
import { clusterProject, postgresPassProject } from './test/support/jest-passes.js';
import { suiteMembership } from './test/support/jest-suites.js';

// The passes `npm test` runs (one Jest run, two workers, longest file first across all of them):
// - 'sqlite': the unit specs (project `unit`) and the e2e suites on SQLite (project `e2e`);
// - 'sqlite+cluster': those and the cluster suite (project `cluster`: three instances on a
//   PostgreSQL and a Redis of their own, test/cluster);
// - 'all' (the default): those and the same e2e suites on PostgreSQL + Redis (project `e2e-pg`:
//   one throwaway cluster and redis-server for the run), without the case files that run the
//   service only as processes on SQLite files whatever the pass (test/support/sqlite-pass-only.js).
// TEST_PASSES=<one of them> overrides it for one run; `--selectProjects e2e-pg` (npm run test:pg)
// or `--selectProjects cluster` (npm run test:cluster) runs one pass alone.
const DEFAULT_PASSES = 'all';
const PASSES = ['sqlite', 'sqlite+cluster', 'all'];
const passes = process.env.TEST_PASSES ?? DEFAULT_PASSES;
if (!PASSES.includes(passes)) {
  throw new Error(`TEST_PASSES must be one of ${PASSES.join(', ')}, not ${JSON.stringify(passes)}`);
}

// The e2e projects run suite files (test/e2e/suites/*.e2e-suite.ts), each importing a set of case
// files (test/e2e/*.e2e-spec.ts): Jest gives every test file its own module registry, and a suite
// links and evaluates the app's module graph once for all its case files (test/support/
// jest-suite.ts). A case file named on the command line (`jest test/e2e/health.e2e-spec.ts`, or any
// path pattern containing `e2e-spec`), or SVC_JEST_CASE_FILES=1, runs case files as files of their
// own instead: the way to run one alone (`npm run test:file -- <path>`).
const caseFilesAlone =
  process.env.SVC_JEST_CASE_FILES === '1' ||
  process.argv.slice(2).some((arg) => !arg.startsWith('-') && arg.includes('e2e-spec'));
// Every case file in exactly one suite: one in none would silently never run, one in two twice.
const { problems } = suiteMembership(fileURLToPath(new URL('./test/e2e', import.meta.url)));
if (problems.length > 0) {
  throw new Error(
    `test/e2e/suites/ does not import every case file exactly once:\n  ${problems.join('\n  ')}`,
  );
}

const e2e = {
  ...common,
  displayName: 'e2e',
  roots: ['<rootDir>/test'],
  testMatch: caseFilesAlone ? ['**/e2e/**/*.e2e-spec.ts'] : ['**/e2e/suites/*.e2e-suite.ts'],
};

export default {
  projects: [
    {
      ...common,
      displayName: 'unit',
      roots: ['<rootDir>/src', '<rootDir>/test/support'],
      testMatch: ['**/*.spec.ts'],
    },
    e2e,
    ...(passes === 'all' ? [postgresPassProject(e2e)] : []),
    ...(passes === 'sqlite' ? [] : [clusterProject]),
  ],
  // Longest first by measured seconds, also without Jest's timing cache (fresh clone, CI).
  testSequencer: '<rootDir>/test/support/jest-sequencer.js',
  // Top level: Jest ignores testTimeout inside a project entry.
  testTimeout: 60000,
  // it.concurrent tests at once in a file (the suites that start `node dist/main.js` processes):
  // three overlap their waits without starving a busy two-core machine's other worker.
  maxConcurrency: 3,
  // The e2e boots' migrated and seeded DATA_DIR templates live for one run.
  globalSetup: '<rootDir>/test/support/global-setup.js',
  globalTeardown: '<rootDir>/test/support/global-teardown.js',
};
