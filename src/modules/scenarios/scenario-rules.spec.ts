import { describe, expect, it } from '@jest/globals';
import { DomainError } from '../../common/errors/domain-error.js';
import { parseScenario, type OperationFacts } from './scenario-rules.js';
import { operationName } from './scenario-gate.js';

const OPERATIONS: Record<string, OperationFacts> = {
  'POST /orders': { codes: ['INSUFFICIENT_FUNDS', 'NOT_FOUND'], placesOrder: true },
  'GET /wallet': { codes: ['INTERNAL'], placesOrder: false },
};
const parse = (body: unknown) => parseScenario(body, (name) => OPERATIONS[name]);

function fieldsOf(body: unknown): string[] {
  try {
    parse(body);
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    const e = err as DomainError;
    expect(e.code).toBe('VALIDATION_FAILED');
    return (e.details.fields as { field: string }[]).map((f) => f.field);
  }
  throw new Error('expected a refusal');
}

describe('parseScenario', () => {
  it('defaults times to 1 and match filters to null; UNAVAILABLE to Retry-After 1', () => {
    expect(parse({ match: { operation: 'GET /wallet' }, effect: { type: 'UNAVAILABLE' } })).toEqual(
      {
        match: { operation: 'GET /wallet', market_id: null, client_order_id_prefix: null },
        effect: { type: 'UNAVAILABLE', retry_after_seconds: 1 },
        times: 1,
      },
    );
  });

  it('names every bad field at once', () => {
    expect(
      fieldsOf({
        match: { operation: 'GET /nowhere', extra: 1 },
        effect: { type: 'DELAY', ms: 0 },
        times: 0,
      }).sort(),
    ).toEqual(['effect.ms', 'match.extra', 'match.operation', 'times']);
  });

  it('takes only the codes the operation documents, and PARTIAL_FILL only on order placement', () => {
    expect(
      fieldsOf({
        match: { operation: 'GET /wallet' },
        effect: { type: 'REJECT', code: 'NOT_FOUND' },
      }),
    ).toEqual(['effect.code']);
    expect(
      parse({ match: { operation: 'POST /orders' }, effect: { type: 'REJECT', code: 'NOT_FOUND' } })
        .effect,
    ).toEqual({ type: 'REJECT', code: 'NOT_FOUND' });
    expect(
      fieldsOf({
        match: { operation: 'GET /wallet' },
        effect: { type: 'PARTIAL_FILL', quantity: 2 },
      }),
    ).toEqual(['effect.type']);
  });

  it('refuses a body that is not an object', () => {
    expect(fieldsOf([])).toEqual(['body']);
    expect(fieldsOf(null)).toEqual(['body']);
  });
});

describe('operationName', () => {
  it('names a Fastify route as the OpenAPI document does, HEAD as GET', () => {
    expect(operationName('DELETE', '/api/v1/orders/:id')).toBe('DELETE /orders/{id}');
    expect(operationName('HEAD', '/api/v1/markets/:id/orderbook')).toBe(
      'GET /markets/{id}/orderbook',
    );
  });
});
