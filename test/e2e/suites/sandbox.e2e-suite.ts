// Sandbox controls, the sandbox clock, scenarios.
// One Jest test file for these case files: the app is linked once for all (test/support/jest-suite.ts).
import { caseFile } from '../../support/jest-suite.js';

await caseFile('sandbox-controls.e2e-spec.ts', () => import('../sandbox-controls.e2e-spec.js'));
await caseFile(
  'sandbox-clock-restart.e2e-spec.ts',
  () => import('../sandbox-clock-restart.e2e-spec.js'),
);
await caseFile('sandbox-clock.e2e-spec.ts', () => import('../sandbox-clock.e2e-spec.js'));
await caseFile('scenarios-rules.e2e-spec.ts', () => import('../scenarios-rules.e2e-spec.js'));
await caseFile('scenarios-effects.e2e-spec.ts', () => import('../scenarios-effects.e2e-spec.js'));
