// Access: request signing, sessions, secrets, terms, admin e-mails, CORS, idempotency.
// One Jest test file for these case files: the app is linked once for all (test/support/jest-suite.ts).
import { caseFile } from '../../support/jest-suite.js';

await caseFile('access-signing.e2e-spec.ts', () => import('../access-signing.e2e-spec.js'));
await caseFile('access-auth.e2e-spec.ts', () => import('../access-auth.e2e-spec.js'));
await caseFile('access-secrets.e2e-spec.ts', () => import('../access-secrets.e2e-spec.js'));
await caseFile('access-terms.e2e-spec.ts', () => import('../access-terms.e2e-spec.js'));
await caseFile(
  'access-admin-emails.e2e-spec.ts',
  () => import('../access-admin-emails.e2e-spec.js'),
);
await caseFile('access-mfa-profile.e2e-spec.ts', () => import('../access-mfa-profile.e2e-spec.js'));
await caseFile('access-cors.e2e-spec.ts', () => import('../access-cors.e2e-spec.js'));
await caseFile('access-idempotency.e2e-spec.ts', () => import('../access-idempotency.e2e-spec.js'));
await caseFile('idempotency-fence.e2e-spec.ts', () => import('../idempotency-fence.e2e-spec.js'));
await caseFile(
  'access-signing-replay.e2e-spec.ts',
  () => import('../access-signing-replay.e2e-spec.js'),
);
