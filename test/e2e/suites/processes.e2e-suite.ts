// The service as a process: shutdown, Redis shared state, the examples against a world.
// One Jest test file for these case files: the app is linked once for all (test/support/jest-suite.ts).
import { caseFile } from '../../support/jest-suite.js';

await caseFile('shutdown.e2e-spec.ts', () => import('../shutdown.e2e-spec.js'));
await caseFile('examples-ci-world.e2e-spec.ts', () => import('../examples-ci-world.e2e-spec.js'));
await caseFile('redis-shared-state.e2e-spec.ts', () => import('../redis-shared-state.e2e-spec.js'));
await caseFile(
  'redis-cluster-signals.e2e-spec.ts',
  () => import('../redis-cluster-signals.e2e-spec.js'),
);
await caseFile('realtime-redis-bus.e2e-spec.ts', () => import('../realtime-redis-bus.e2e-spec.js'));
