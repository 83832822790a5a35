// Orders: exports, durability across crashes, fills lists, idempotency after a crash.
// One Jest test file for these case files: the app is linked once for all (test/support/jest-suite.ts).
import { caseFile } from '../../support/jest-suite.js';

await caseFile('orders-export.e2e-spec.ts', () => import('../orders-export.e2e-spec.js'));
await caseFile('orders-durability.e2e-spec.ts', () => import('../orders-durability.e2e-spec.js'));
await caseFile(
  'orders-export-csv-safety.e2e-spec.ts',
  () => import('../orders-export-csv-safety.e2e-spec.js'),
);
await caseFile('orders-list-fills.e2e-spec.ts', () => import('../orders-list-fills.e2e-spec.js'));
await caseFile('idempotency-crash.e2e-spec.ts', () => import('../idempotency-crash.e2e-spec.js'));
