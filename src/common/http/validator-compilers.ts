import type { FastifyServerOptions } from 'fastify';
import { createRequire } from 'node:module';

/** Fastify's `schemaController.compilersFactory.buildValidator`. */
type BuildValidator = NonNullable<
  NonNullable<
    NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']
  >['buildValidator']
>;

// The very copy of @fastify/ajv-compiler that Fastify itself loads (resolved from fastify's own
// location, so the same defaults and ajv-formats as Fastify's default validator compiler).
const fromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'));
const { AjvCompiler } = fromFastify('@fastify/ajv-compiler') as {
  AjvCompiler: () => BuildValidator;
};

/**
 * Fastify's validator compilers, shared by every app this process builds. Fastify's default makes
 * a pool of compilers per server instance: each boot made a new Ajv, compiled its meta-schema
 * and compiled the body schemas again (about 70 ms of CPU per boot of the e2e tests, which boot
 * the app hundreds of times per process). The pool is keyed by Fastify's shared schemas and the
 * ajv options, and Ajv keeps a compiled schema by the schema object, which are module constants
 * (the route decorators'), so every later boot gets the same compiled functions. The pool and its
 * cache stay as small as one boot's.
 *
 * Passed as a custom `buildValidator`, it makes Fastify treat the compiler as custom, which
 * changes one thing: a route's `headers` schema is not lower-cased for it. No route has one
 * (header rules are checked by the request pipeline); a route that adds one writes its
 * properties in lower case.
 */
export const sharedValidatorCompilers: BuildValidator = AjvCompiler();
