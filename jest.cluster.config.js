// The cluster suite (npm run test:cluster): three instances of the built service (dist/main.js)
// on one throwaway PostgreSQL and one redis-server (test/support/services.ts). Not part of
// `npm test`: it needs the Debian postgresql and redis-server packages and takes a minute.
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
      keepClassNames: true,
    },
    module: { type: 'es6' },
    sourceMaps: 'inline',
  },
];

// As in jest.config.js: @fastify/static (CommonJS) requires content-disposition (ESM-only).
const esmOnlyRequiredFromCjs = [
  '@swc/jest',
  { jsc: { parser: { syntax: 'ecmascript' }, target: 'es2022' }, module: { type: 'commonjs' } },
];

export default {
  displayName: 'cluster',
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': swc,
    '/node_modules/content-disposition/.+\\.js$': esmOnlyRequiredFromCjs,
  },
  transformIgnorePatterns: ['/node_modules/(?!content-disposition/)'],
  resolver: '<rootDir>/test/support/jest-resolver.cjs',
  testEnvironment: 'node',
  roots: ['<rootDir>/test/cluster'],
  testMatch: ['**/*.cluster-spec.ts'],
  testTimeout: 180000,
};
