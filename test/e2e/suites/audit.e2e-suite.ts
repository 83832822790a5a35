// The audit log of trading and the platform, and users.
// One Jest test file for these case files: the app is linked once for all (test/support/jest-suite.ts).
import { caseFile } from '../../support/jest-suite.js';

await caseFile('audit-trading.e2e-spec.ts', () => import('../audit-trading.e2e-spec.js'));
await caseFile('audit-platform.e2e-spec.ts', () => import('../audit-platform.e2e-spec.js'));
await caseFile('users.e2e-spec.ts', () => import('../users.e2e-spec.js'));
await caseFile('users-usernames.e2e-spec.ts', () => import('../users-usernames.e2e-spec.js'));
