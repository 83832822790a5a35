// Boot configuration: env bounds checked by starting the service, and the scripts around it.
// One Jest test file for these case files: the app is linked once for all (test/support/jest-suite.ts).
import { caseFile } from '../../support/jest-suite.js';

await caseFile('config-boot.e2e-spec.ts', () => import('../config-boot.e2e-spec.js'));
await caseFile('services-script.e2e-spec.ts', () => import('../services-script.e2e-spec.js'));
await caseFile(
  'tier-decision-transaction.e2e-spec.ts',
  () => import('../tier-decision-transaction.e2e-spec.js'),
);
