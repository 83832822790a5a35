import { describe, expect, it } from '@jest/globals';
import { DomainError } from '../../common/errors/domain-error.js';
import { checkedMarketIds, MAX_WATCHLIST_MARKETS, nameKey } from './watchlist-rules.js';

const mkt = (i: number) => `mkt_${i.toString(16).padStart(20, '0')}`;

function refusal(ids: string[]): DomainError {
  try {
    checkedMarketIds(ids);
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    return err as DomainError;
  }
  throw new Error('accepted');
}

describe('watchlist names', () => {
  it('compare ignoring case, Unicode-aware', () => {
    expect(nameKey('Crypto')).toBe(nameKey('cRYPTO'));
    expect(nameKey('Ärger')).toBe(nameKey('ärger'));
    // Precomposed Ä and A + combining diaeresis are one name.
    expect(nameKey('\u00c4rger')).toBe(nameKey('A\u0308rger'));
  });

  it('keep names that differ in more than case apart', () => {
    expect(nameKey('Crypto')).not.toBe(nameKey('Crypto '));
    expect(nameKey('Arger')).not.toBe(nameKey('Ärger'));
  });
});

describe('market_ids of a body', () => {
  it('keeps the order as sent', () => {
    expect(checkedMarketIds([mkt(3), mkt(1), mkt(2)])).toEqual([mkt(3), mkt(1), mkt(2)]);
    expect(checkedMarketIds([])).toEqual([]);
  });

  it('names each malformed id by its index (400)', () => {
    const err = refusal([mkt(1), 'ord_abc', mkt(2), 'MKT_1']);
    expect(err.code).toBe('VALIDATION_FAILED');
    expect((err.details.fields as { field: string }[]).map((f) => f.field)).toEqual([
      'market_ids[1]',
      'market_ids[3]',
    ]);
  });

  it('refuses an id twice, naming market_ids and both places (400)', () => {
    const err = refusal([mkt(1), mkt(2), mkt(1)]);
    expect(err.code).toBe('VALIDATION_FAILED');
    expect(err.details.fields).toEqual([
      {
        field: 'market_ids',
        message: `market_ids must not repeat an id: market_ids[2] repeats market_ids[0] (${mkt(1)})`,
      },
    ]);
  });

  it(`takes ${MAX_WATCHLIST_MARKETS} ids, refuses one more (422, details.limit)`, () => {
    const ids = Array.from({ length: MAX_WATCHLIST_MARKETS + 1 }, (_, i) => mkt(i));
    expect(checkedMarketIds(ids.slice(0, MAX_WATCHLIST_MARKETS))).toHaveLength(200);
    const err = refusal(ids);
    expect(err.code).toBe('WATCHLIST_LIMIT_REACHED');
    expect(err.status).toBe(422);
    expect(err.details).toEqual({ limit: 200 });
  });
});
