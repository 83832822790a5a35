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
const common = {
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
    // ESM-only, required by @fastify/static for reply.download (unused): see the file.
    '^content-disposition$': '<rootDir>/test/support/jest/content-disposition.cjs',
  },
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
};
