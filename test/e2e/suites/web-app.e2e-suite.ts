// The demo web app in Chromium, and its HTTP side.
// One Jest test file for these case files: the app is linked once for all (test/support/jest-suite.ts).
import { caseFile } from '../../support/jest-suite.js';

await caseFile('web-app.e2e-spec.ts', () => import('../web-app.e2e-spec.js'));
await caseFile('web-app-worlds.e2e-spec.ts', () => import('../web-app-worlds.e2e-spec.js'));
await caseFile('web-app-http.e2e-spec.ts', () => import('../web-app-http.e2e-spec.js'));
