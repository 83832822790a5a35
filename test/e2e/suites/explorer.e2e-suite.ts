// The API Explorer in Chromium and over HTTP, and the web app's resilience.
// One Jest test file for these case files: the app is linked once for all (test/support/jest-suite.ts).
import { caseFile } from '../../support/jest-suite.js';

await caseFile('explorer.browser.e2e-spec.ts', () => import('../explorer.browser.e2e-spec.js'));
await caseFile('web-app-resilience.e2e-spec.ts', () => import('../web-app-resilience.e2e-spec.js'));
await caseFile('explorer.e2e-spec.ts', () => import('../explorer.e2e-spec.js'));
