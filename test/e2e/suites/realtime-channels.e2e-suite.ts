// Realtime channels: key lifecycle, auth, the book, notifications, the audit of realtime.
// One Jest test file for these case files: the app is linked once for all (test/support/jest-suite.ts).
import { caseFile } from '../../support/jest-suite.js';

await caseFile(
  'realtime-key-lifecycle.e2e-spec.ts',
  () => import('../realtime-key-lifecycle.e2e-spec.js'),
);
await caseFile('realtime-auth.e2e-spec.ts', () => import('../realtime-auth.e2e-spec.js'));
await caseFile('realtime-book.e2e-spec.ts', () => import('../realtime-book.e2e-spec.js'));
await caseFile(
  'notifications-realtime.e2e-spec.ts',
  () => import('../notifications-realtime.e2e-spec.js'),
);
await caseFile(
  'notifications-worlds.e2e-spec.ts',
  () => import('../notifications-worlds.e2e-spec.js'),
);
await caseFile('audit-realtime.e2e-spec.ts', () => import('../audit-realtime.e2e-spec.js'));
