import { describe, expect, it } from '@jest/globals';
import type { MarketSummary } from '../../engine/index.js';
import { marketBrief, marketPrices, marketSummary, type StoredMarket } from './market-summary.js';

const stored: StoredMarket = {
  id: 'mkt_0123456789abcdef0123',
  slug: 'btc-above-150k-2027-06-30',
  title: 'BTC above 150k on 2027-06-30?',
  description: 'Resolves YES if ...',
  category: 'CRYPTO',
  status: 'RESOLVED',
  outcome: 'YES',
  closeTime: '2027-06-30T00:00:00.000Z',
  lastPrice: 40,
  volume: 12,
  indexSymbol: 'BTC-USD',
  strikeCents: 15_000_000,
};

const engine: MarketSummary = {
  marketId: stored.id,
  status: 'CLOSED',
  outcome: null,
  bestBid: 44,
  bestAsk: 46,
  lastPrice: 45,
  volume: 30,
  orphanYes: 0,
  orphanNo: 0,
};

describe('market summary', () => {
  it("takes the engine's prices and the stored status", () => {
    expect(marketSummary(stored, engine)).toEqual({
      id: stored.id,
      slug: stored.slug,
      title: stored.title,
      description: stored.description,
      category: 'CRYPTO',
      status: 'RESOLVED',
      outcome: 'YES',
      close_time: stored.closeTime,
      index: 'BTC-USD',
      strike: '150000.00',
      best_bid: 44,
      best_ask: 46,
      last_price: 45,
      volume: 30,
    });
  });

  it('shows index and strike as null for a market without them', () => {
    expect(
      marketSummary({ ...stored, indexSymbol: null, strikeCents: null }, engine),
    ).toMatchObject({ index: null, strike: null });
  });

  it('falls back to the stored last price and volume, with no book, when no engine holds it', () => {
    expect(marketSummary(stored, undefined)).toMatchObject({
      best_bid: null,
      best_ask: null,
      last_price: 40,
      volume: 12,
    });
  });

  it('gives the ticker its four price fields in wire order', () => {
    expect(Object.entries(marketPrices(engine))).toEqual([
      ['best_bid', 44],
      ['best_ask', 46],
      ['last_price', 45],
      ['volume', 30],
    ]);
  });

  it('briefs a market with the same values as its summary, fewer fields', () => {
    for (const s of [engine, undefined]) {
      const brief = marketBrief(stored, s);
      expect(Object.keys(brief)).toEqual([
        'id',
        'slug',
        'title',
        'status',
        'last_price',
        'best_bid',
        'best_ask',
      ]);
      expect(marketSummary(stored, s)).toMatchObject(brief);
    }
  });
});
