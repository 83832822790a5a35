// Crypto markets, indices, ranks, the leaderboard, idempotency across environments.
// One Jest test file for these case files: the app is linked once for all (test/support/jest-suite.ts).
import { caseFile } from '../../support/jest-suite.js';

await caseFile('crypto-markets.e2e-spec.ts', () => import('../crypto-markets.e2e-spec.js'));
await caseFile('crypto.e2e-spec.ts', () => import('../crypto.e2e-spec.js'));
await caseFile('indices.e2e-spec.ts', () => import('../indices.e2e-spec.js'));
await caseFile('rank.e2e-spec.ts', () => import('../rank.e2e-spec.js'));
await caseFile('leaderboard.e2e-spec.ts', () => import('../leaderboard.e2e-spec.js'));
await caseFile(
  'idempotency-environments.e2e-spec.ts',
  () => import('../idempotency-environments.e2e-spec.js'),
);
