// Data exports cut short by a crash, and exports in worlds.
// One Jest test file for these case files: the app is linked once for all (test/support/jest-suite.ts).
import { caseFile } from '../../support/jest-suite.js';

await caseFile('data-exports-crash.e2e-spec.ts', () => import('../data-exports-crash.e2e-spec.js'));
await caseFile('data-exports.e2e-spec.ts', () => import('../data-exports.e2e-spec.js'));
await caseFile('worlds-exports.e2e-spec.ts', () => import('../worlds-exports.e2e-spec.js'));
