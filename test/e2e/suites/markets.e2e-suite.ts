// Markets: creation, book, closing, and sports markets.
// One Jest test file for these case files: the app is linked once for all (test/support/jest-suite.ts).
import { caseFile } from '../../support/jest-suite.js';

await caseFile(
  'markets-create-lifecycle.e2e-spec.ts',
  () => import('../markets-create-lifecycle.e2e-spec.js'),
);
await caseFile('markets-create.e2e-spec.ts', () => import('../markets-create.e2e-spec.js'));
await caseFile('markets-book.e2e-spec.ts', () => import('../markets-book.e2e-spec.js'));
await caseFile('markets-close.e2e-spec.ts', () => import('../markets-close.e2e-spec.js'));
await caseFile('markets.e2e-spec.ts', () => import('../markets.e2e-spec.js'));
await caseFile('sports-seeds.e2e-spec.ts', () => import('../sports-seeds.e2e-spec.js'));
await caseFile('sports-final.e2e-spec.ts', () => import('../sports-final.e2e-spec.js'));
await caseFile('sports.e2e-spec.ts', () => import('../sports.e2e-spec.js'));
