// The Jest settings every project shares (jest.config.js, jest.cluster.config.js): Jest runs the
// TypeScript sources as native ESM (NestJS 12 is ESM-only), transformed by SWC.
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
export const common = {
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': swc,
    '/node_modules/content-disposition/.+\\.js$': esmOnlyRequiredFromCjs,
  },
  transformIgnorePatterns: ['/node_modules/(?!content-disposition/)'],
  resolver: '<rootDir>/test/support/jest-resolver.cjs',
  testEnvironment: 'node',
};
