// Comments, watchlists and the wallet.
// One Jest test file for these case files: the app is linked once for all (test/support/jest-suite.ts).
import { caseFile } from '../../support/jest-suite.js';

await caseFile(
  'comments-moderation.e2e-spec.ts',
  () => import('../comments-moderation.e2e-spec.js'),
);
await caseFile('comments-limits.e2e-spec.ts', () => import('../comments-limits.e2e-spec.js'));
await caseFile('comments.e2e-spec.ts', () => import('../comments.e2e-spec.js'));
await caseFile('watchlists.e2e-spec.ts', () => import('../watchlists.e2e-spec.js'));
await caseFile('watchlists-worlds.e2e-spec.ts', () => import('../watchlists-worlds.e2e-spec.js'));
await caseFile('watchlists-limits.e2e-spec.ts', () => import('../watchlists-limits.e2e-spec.js'));
await caseFile('wallet-real-money.e2e-spec.ts', () => import('../wallet-real-money.e2e-spec.js'));
await caseFile('wallet-ledger.e2e-spec.ts', () => import('../wallet-ledger.e2e-spec.js'));
await caseFile('wallet-fills.e2e-spec.ts', () => import('../wallet-fills.e2e-spec.js'));
