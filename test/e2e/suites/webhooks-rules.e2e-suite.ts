// Webhook rules: review, SSRF, signing, routing, worlds, the workbench.
// One Jest test file for these case files: the app is linked once for all (test/support/jest-suite.ts).
import { caseFile } from '../../support/jest-suite.js';

await caseFile('webhooks-review.e2e-spec.ts', () => import('../webhooks-review.e2e-spec.js'));
await caseFile('webhooks-ssrf.e2e-spec.ts', () => import('../webhooks-ssrf.e2e-spec.js'));
await caseFile('webhooks-signing.e2e-spec.ts', () => import('../webhooks-signing.e2e-spec.js'));
await caseFile('webhooks-worlds.e2e-spec.ts', () => import('../webhooks-worlds.e2e-spec.js'));
await caseFile('webhooks-routing.e2e-spec.ts', () => import('../webhooks-routing.e2e-spec.js'));
await caseFile('webhooks-workbench.e2e-spec.ts', () => import('../webhooks-workbench.e2e-spec.js'));
