// The cluster suite alone with its own config (the same as `npm run test:cluster`, which selects
// the `cluster` project of jest.config.js): three instances of the built service (dist/main.js) on
// one throwaway PostgreSQL and one redis-server (test/support/services.ts). It needs the Debian
// postgresql and redis-server packages and takes a minute or two.
import { clusterProject } from './test/support/jest-passes.js';

export default {
  ...clusterProject,
  testTimeout: 180000,
};
