// Ephemeral worlds: lifecycle, groups, events, clock, crypto, crash recovery.
// One Jest test file for these case files: the app is linked once for all (test/support/jest-suite.ts).
import { caseFile } from '../../support/jest-suite.js';

await caseFile('worlds-lifecycle.e2e-spec.ts', () => import('../worlds-lifecycle.e2e-spec.js'));
await caseFile('worlds.e2e-spec.ts', () => import('../worlds.e2e-spec.js'));
await caseFile('worlds-groups.e2e-spec.ts', () => import('../worlds-groups.e2e-spec.js'));
await caseFile('worlds-events.e2e-spec.ts', () => import('../worlds-events.e2e-spec.js'));
await caseFile('worlds-clock.e2e-spec.ts', () => import('../worlds-clock.e2e-spec.js'));
await caseFile(
  'worlds-groups-markets.e2e-spec.ts',
  () => import('../worlds-groups-markets.e2e-spec.js'),
);
await caseFile('worlds-crypto.e2e-spec.ts', () => import('../worlds-crypto.e2e-spec.js'));
await caseFile(
  'worlds-crash-recovery.e2e-spec.ts',
  () => import('../worlds-crash-recovery.e2e-spec.js'),
);
await caseFile(
  'worlds-recovery-peers.e2e-spec.ts',
  () => import('../worlds-recovery-peers.e2e-spec.js'),
);
await caseFile('worlds-template.e2e-spec.ts', () => import('../worlds-template.e2e-spec.js'));
