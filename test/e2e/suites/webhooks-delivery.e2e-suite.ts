// Webhook delivery, its spool and restarts.
// One Jest test file for these case files: the app is linked once for all (test/support/jest-suite.ts).
import { caseFile } from '../../support/jest-suite.js';

await caseFile('webhooks-delivery.e2e-spec.ts', () => import('../webhooks-delivery.e2e-spec.js'));
await caseFile('webhooks-spool.e2e-spec.ts', () => import('../webhooks-spool.e2e-spec.js'));
await caseFile('webhooks-restart.e2e-spec.ts', () => import('../webhooks-restart.e2e-spec.js'));
await caseFile('webhooks-health.e2e-spec.ts', () => import('../webhooks-health.e2e-spec.js'));
