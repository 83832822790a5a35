// OpenAPI request schemas against the server: generated valid and invalid bodies per write operation (alone: the longest case file).
// One Jest test file for these case files: the app is linked once for all (test/support/jest-suite.ts).
import { caseFile } from '../../support/jest-suite.js';

await caseFile('schema-fuzz.e2e-spec.ts', () => import('../schema-fuzz.e2e-spec.js'));
