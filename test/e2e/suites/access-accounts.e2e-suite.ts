// Access: routing, tier review, scrypt sign-in, keys, MFA.
// One Jest test file for these case files: the app is linked once for all (test/support/jest-suite.ts).
import { caseFile } from '../../support/jest-suite.js';

await caseFile('access-routing.e2e-spec.ts', () => import('../access-routing.e2e-spec.js'));
await caseFile('access-tier-review.e2e-spec.ts', () => import('../access-tier-review.e2e-spec.js'));
await caseFile('access-auth-scrypt.e2e-spec.ts', () => import('../access-auth-scrypt.e2e-spec.js'));
await caseFile('access-keys.e2e-spec.ts', () => import('../access-keys.e2e-spec.js'));
await caseFile('access-mfa.e2e-spec.ts', () => import('../access-mfa.e2e-spec.js'));
