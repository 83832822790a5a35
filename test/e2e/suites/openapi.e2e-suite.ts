// The OpenAPI document, responses against it, error shapes.
// One Jest test file for these case files: the app is linked once for all (test/support/jest-suite.ts).
import { caseFile } from '../../support/jest-suite.js';

await caseFile(
  'openapi-conformance.e2e-spec.ts',
  () => import('../openapi-conformance.e2e-spec.js'),
);
await caseFile('openapi.e2e-spec.ts', () => import('../openapi.e2e-spec.js'));
await caseFile('errors.e2e-spec.ts', () => import('../errors.e2e-spec.js'));
