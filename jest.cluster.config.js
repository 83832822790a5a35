// The cluster suite (npm run test:cluster): three instances of the built service (dist/main.js)
// on one throwaway PostgreSQL and one redis-server (test/support/services.ts). Not part of
// `npm test`: it needs the Debian postgresql and redis-server packages and takes a minute.
import { common } from './test/support/jest-common.js';

export default {
  ...common,
  displayName: 'cluster',
  roots: ['<rootDir>/test/cluster'],
  testMatch: ['**/*.cluster-spec.ts'],
  testTimeout: 180000,
};
