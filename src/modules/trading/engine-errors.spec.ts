import { describe, expect, it } from '@jest/globals';
import type { Failure, ResultCode } from '../../engine/index.js';
import { fromEngine } from './engine-errors.js';

const failure = (code: ResultCode, message = 'why', extra: Partial<Failure> = {}): Failure => ({
  ok: false,
  code,
  message,
  ...extra,
});

describe('fromEngine: the one mapping from engine result codes to API errors', () => {
  it('an order short of funds names what it needs and the market', () => {
    const err = fromEngine(
      failure('INSUFFICIENT_FUNDS', 'short', { funds: { required: 500, available: 20 } }),
      { marketId: 'mkt_1' },
    );
    expect(err.code).toBe('INSUFFICIENT_FUNDS');
    expect(err.details).toEqual({ market_id: 'mkt_1', required_cents: 500, available_cents: 20 });
  });

  it('a money movement short of funds names the amount requested and the balance available', () => {
    const err = fromEngine(failure('INSUFFICIENT_FUNDS'), {
      movement: { requested: 900, available: 100 },
    });
    expect(err.code).toBe('INSUFFICIENT_FUNDS');
    expect(err.message).toBe('Insufficient available balance: 900 cents requested, 100 available');
    expect(err.details).toEqual({ requested_cents: 900, available_cents: 100 });
  });

  it('a bad amount of a money movement names amount_cents; of an order, the body', () => {
    const movement = { requested: 0, available: 0 };
    const fieldsOf = (f: Failure, ctx = {}) =>
      (fromEngine(f, ctx).details as { fields: { field: string }[] }).fields.map((x) => x.field);
    expect(fromEngine(failure('INVALID_AMOUNT'), { movement }).code).toBe('VALIDATION_FAILED');
    expect(fieldsOf(failure('INVALID_AMOUNT'), { movement })).toEqual(['amount_cents']);
    expect(fieldsOf(failure('INVALID_ORDER'))).toEqual(['body']);
  });

  it('a resolved market refuses an order as not open, and a second resolution as a conflict', () => {
    const order = fromEngine(failure('MARKET_ALREADY_RESOLVED'), { marketId: 'mkt_1' });
    expect(order.code).toBe('MARKET_NOT_OPEN');
    expect(order.details).toEqual({ market_id: 'mkt_1', status: 'RESOLVED' });
    const resolve = fromEngine(failure('MARKET_ALREADY_RESOLVED'), {
      marketId: 'mkt_1',
      resolving: true,
    });
    expect(resolve.code).toBe('MARKET_ALREADY_RESOLVED');
    expect(resolve.details).toEqual({ market_id: 'mkt_1' });
  });

  it('codes no caller can cause are internal errors', () => {
    expect(fromEngine(failure('DUPLICATE_ORDER')).code).toBe('INTERNAL');
  });
});
