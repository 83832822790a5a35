// Requests for quote.
// One Jest test file for these case files: the app is linked once for all (test/support/jest-suite.ts).
import { caseFile } from '../../support/jest-suite.js';

await caseFile('rfq-durability.e2e-spec.ts', () => import('../rfq-durability.e2e-spec.js'));
await caseFile('rfq-expiry-house.e2e-spec.ts', () => import('../rfq-expiry-house.e2e-spec.js'));
await caseFile('rfq-events.e2e-spec.ts', () => import('../rfq-events.e2e-spec.js'));
await caseFile('rfq-worlds.e2e-spec.ts', () => import('../rfq-worlds.e2e-spec.js'));
await caseFile('rfq.e2e-spec.ts', () => import('../rfq.e2e-spec.js'));
await caseFile('rfq-accept.e2e-spec.ts', () => import('../rfq-accept.e2e-spec.js'));
