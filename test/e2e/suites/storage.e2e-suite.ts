// Storage: the data directory, persistence, checkpoints, lifecycle, the build npm start uses.
// One Jest test file for these case files: the app is linked once for all (test/support/jest-suite.ts).
import { caseFile } from '../../support/jest-suite.js';

await caseFile('data-dir.e2e-spec.ts', () => import('../data-dir.e2e-spec.js'));
await caseFile('persistence.e2e-spec.ts', () => import('../persistence.e2e-spec.js'));
await caseFile(
  'database-checkpoints.e2e-spec.ts',
  () => import('../database-checkpoints.e2e-spec.js'),
);
await caseFile('lifecycle.e2e-spec.ts', () => import('../lifecycle.e2e-spec.js'));
await caseFile('start-build.e2e-spec.ts', () => import('../start-build.e2e-spec.js'));
