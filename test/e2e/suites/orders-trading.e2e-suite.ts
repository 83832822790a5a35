// Orders: limits, management, batches, placement, self-trade, position cursors.
// One Jest test file for these case files: the app is linked once for all (test/support/jest-suite.ts).
import { caseFile } from '../../support/jest-suite.js';

await caseFile('orders-limits.e2e-spec.ts', () => import('../orders-limits.e2e-spec.js'));
await caseFile('orders-manage.e2e-spec.ts', () => import('../orders-manage.e2e-spec.js'));
await caseFile(
  'orders-batch-concurrency.e2e-spec.ts',
  () => import('../orders-batch-concurrency.e2e-spec.js'),
);
await caseFile('orders-place.e2e-spec.ts', () => import('../orders-place.e2e-spec.js'));
await caseFile('orders-self-trade.e2e-spec.ts', () => import('../orders-self-trade.e2e-spec.js'));
await caseFile('orders-batch-legs.e2e-spec.ts', () => import('../orders-batch-legs.e2e-spec.js'));
await caseFile('positions-cursor.e2e-spec.ts', () => import('../positions-cursor.e2e-spec.js'));
