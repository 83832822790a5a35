// Health, logs, the changelog, what an integrator meets first.
// One Jest test file for these case files: the app is linked once for all (test/support/jest-suite.ts).
import { caseFile } from '../../support/jest-suite.js';

await caseFile('health.e2e-spec.ts', () => import('../health.e2e-spec.js'));
await caseFile('logs.e2e-spec.ts', () => import('../logs.e2e-spec.js'));
await caseFile('changelog.e2e-spec.ts', () => import('../changelog.e2e-spec.js'));
await caseFile('first-contact.e2e-spec.ts', () => import('../first-contact.e2e-spec.js'));
