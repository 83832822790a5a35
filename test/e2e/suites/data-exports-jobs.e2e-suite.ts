// Data export jobs: the worker, the job list, notifications.
// One Jest test file for these case files: the app is linked once for all (test/support/jest-suite.ts).
import { caseFile } from '../../support/jest-suite.js';

await caseFile(
  'data-exports-worker.e2e-spec.ts',
  () => import('../data-exports-worker.e2e-spec.js'),
);
await caseFile('data-exports-jobs.e2e-spec.ts', () => import('../data-exports-jobs.e2e-spec.js'));
await caseFile(
  'data-exports-notify.e2e-spec.ts',
  () => import('../data-exports-notify.e2e-spec.js'),
);
