// Webhook endpoints: lifecycle, suspension, the workbench log, the receiver's abuse limits, notifications.
// One Jest test file for these case files: the app is linked once for all (test/support/jest-suite.ts).
import { caseFile } from '../../support/jest-suite.js';

await caseFile(
  'webhooks-receiver-abuse.e2e-spec.ts',
  () => import('../webhooks-receiver-abuse.e2e-spec.js'),
);
await caseFile('webhooks-lifecycle.e2e-spec.ts', () => import('../webhooks-lifecycle.e2e-spec.js'));
await caseFile(
  'webhooks-workbench-log.e2e-spec.ts',
  () => import('../webhooks-workbench-log.e2e-spec.js'),
);
await caseFile(
  'webhooks-suspension.e2e-spec.ts',
  () => import('../webhooks-suspension.e2e-spec.js'),
);
await caseFile(
  'webhooks-notifications.e2e-spec.ts',
  () => import('../webhooks-notifications.e2e-spec.js'),
);
