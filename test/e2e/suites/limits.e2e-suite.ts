// Rate limits and tiers, HTTP bodies, pagination.
// One Jest test file for these case files: the app is linked once for all (test/support/jest-suite.ts).
import { caseFile } from '../../support/jest-suite.js';

await caseFile('limits.e2e-spec.ts', () => import('../limits.e2e-spec.js'));
await caseFile('limits-tiers.e2e-spec.ts', () => import('../limits-tiers.e2e-spec.js'));
await caseFile('http-bodies.e2e-spec.ts', () => import('../http-bodies.e2e-spec.js'));
await caseFile('pagination.e2e-spec.ts', () => import('../pagination.e2e-spec.js'));
