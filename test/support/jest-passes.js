// The Jest projects of the passes beside the SQLite one (jest.config.js: TEST_PASSES and its default):
// - `e2e-pg`: the e2e project's own suite files, with the harness on PostgreSQL + Redis. The
//   engine is chosen per project, not per process (jest-postgres-pass.js sets TEST_DATABASE in
//   each of its test files' environment only), so its files share the two workers with the
//   SQLite pass's; global-setup-postgres.js starts one PostgreSQL cluster and redis-server for the
//   run, only when a file of this project runs.
// - `cluster`: the cluster suite (test/cluster), three instances on a PostgreSQL and a Redis of
//   its own (test/cluster/cluster-fixture.ts).
import { common } from './jest-common.js';

/** The PostgreSQL + Redis pass of the e2e project `e2e` (same roots and files). */
export function postgresPassProject(e2e) {
  return {
    ...e2e,
    displayName: 'e2e-pg',
    setupFiles: ['<rootDir>/test/support/jest-postgres-pass.js'],
    globalSetup: '<rootDir>/test/support/global-setup-postgres.js',
    globalTeardown: '<rootDir>/test/support/global-teardown-postgres.js',
  };
}

export const clusterProject = {
  ...common,
  displayName: 'cluster',
  roots: ['<rootDir>/test/cluster'],
  testMatch: ['**/*.cluster-spec.ts'],
  // Jest reads testTimeout from the top-level config only: three instances booting on a busy
  // machine need longer than the e2e files' 60 s.
  setupFilesAfterEnv: ['<rootDir>/test/support/jest-cluster-timeout.js'],
};
