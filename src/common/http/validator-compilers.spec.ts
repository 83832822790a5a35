import { describe, expect, it } from '@jest/globals';
import { sharedValidatorCompilers } from './validator-compilers.js';

describe('sharedValidatorCompilers: one Ajv per process for every app', () => {
  const options = { customOptions: { allErrors: true, coerceTypes: false } };
  const schema = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };

  it('gives every app the same compiler, which compiles a schema object once', () => {
    const a = sharedValidatorCompilers({}, options) as (r: { schema: object }) => unknown;
    const b = sharedValidatorCompilers({}, { ...options }) as (r: { schema: object }) => unknown;
    expect(b).toBe(a);
    const v = a({ schema }) as ((x: unknown) => boolean) & { errors?: unknown };
    expect(b({ schema })).toBe(v);
    expect(v({ n: 1 })).toBe(true);
    expect(v({ n: '1' })).toBe(false);
  });

  it('keeps Fastify’s defaults under the app’s options (coercion off, unknown fields kept)', () => {
    const compile = sharedValidatorCompilers(
      {},
      {
        customOptions: { removeAdditional: false, coerceTypes: false, allErrors: true },
      },
    ) as (r: { schema: object }) => (x: unknown) => boolean;
    const v = compile({ schema: { type: 'object', properties: { d: { default: 5 } } } });
    const body: Record<string, unknown> = { extra: 1 };
    expect(v(body)).toBe(true);
    // useDefaults (Fastify's default) fills d; removeAdditional false keeps extra.
    expect(body).toEqual({ extra: 1, d: 5 });
  });
});
