// Realtime connections: cancel on disconnect, slow consumers, the protocol, isolation, the AsyncAPI document.
// One Jest test file for these case files: the app is linked once for all (test/support/jest-suite.ts).
import { caseFile } from '../../support/jest-suite.js';

await caseFile(
  'realtime-cancel-on-disconnect.e2e-spec.ts',
  () => import('../realtime-cancel-on-disconnect.e2e-spec.js'),
);
await caseFile(
  'realtime-slow-consumer.e2e-spec.ts',
  () => import('../realtime-slow-consumer.e2e-spec.js'),
);
await caseFile('realtime-protocol.e2e-spec.ts', () => import('../realtime-protocol.e2e-spec.js'));
await caseFile('realtime-isolation.e2e-spec.ts', () => import('../realtime-isolation.e2e-spec.js'));
await caseFile('realtime-asyncapi.e2e-spec.ts', () => import('../realtime-asyncapi.e2e-spec.js'));
