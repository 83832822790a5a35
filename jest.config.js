// Jest runs the TypeScript sources as native ESM (NestJS 12 is ESM-only), transformed by SWC.
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
// @fastify/static (the browser pages) is CommonJS and requires content-disposition, which is
// ESM-only: Node 20.19 loads that (require of ESM), Jest's module runtime does not, so Jest gets
// a CommonJS copy of it.
const esmOnlyRequiredFromCjs = [
  '@swc/jest',
  { jsc: { parser: { syntax: 'ecmascript' }, target: 'es2022' }, module: { type: 'commonjs' } },
];
const common = {
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': swc,
    '/node_modules/content-disposition/.+\\.js$': esmOnlyRequiredFromCjs,
  },
  transformIgnorePatterns: ['/node_modules/(?!content-disposition/)'],
  resolver: '<rootDir>/test/support/jest-resolver.cjs',
  testEnvironment: 'node',
};
export default {
  projects: [
    { ...common, displayName: 'unit', roots: ['<rootDir>/src'], testMatch: ['**/*.spec.ts'] },
    {
      ...common,
      displayName: 'e2e',
      roots: ['<rootDir>/test'],
      testMatch: ['**/*.e2e-spec.ts'],
    },
  ],
  // Top level: Jest ignores testTimeout inside a project entry.
  testTimeout: 60000,
  // it.concurrent tests at once in a file (the suites that start `node dist/main.js` processes):
  // three overlap their waits without starving a busy two-core machine's other worker.
  maxConcurrency: 3,
  // The e2e boots' migrated and seeded DATA_DIR templates live for one run.
  globalSetup: '<rootDir>/test/support/global-setup.js',
  globalTeardown: '<rootDir>/test/support/global-teardown.js',
};
