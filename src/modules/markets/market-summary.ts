import type { MarketSummary } from '../../engine/index.js';
import type { MarketCategory, MarketStatus, Outcome } from './entities/market.entity.js';
import { formatUsd } from '../crypto/usd.js';

/** A market as stored in an engine database (the entity, or any row with these fields). */
export interface StoredMarket {
  id: string;
  slug: string;
  title: string;
  description: string;
  category: MarketCategory;
  status: MarketStatus;
  outcome: Outcome | null;
  closeTime: string;
  lastPrice: number | null;
  volume: number;
  /** The crypto index a self-resolving market settles on, and its strike in cents (else null). */
  indexSymbol: string | null;
  strikeCents: number | null;
}

/** Book top, last trade and volume, as every market message names them. */
export interface MarketPrices {
  best_bid: number | null;
  best_ask: number | null;
  last_price: number | null;
  volume: number;
}

/** A market's summary fields: the stored record with the engine's prices. */
export interface MarketSummaryFields extends MarketPrices {
  id: string;
  slug: string;
  title: string;
  description: string;
  category: MarketCategory;
  status: MarketStatus;
  outcome: Outcome | null;
  close_time: string;
  /** Crypto markets: the index (BTC-USD, ...) and the strike (USD, 2 decimals); null for others. */
  index: string | null;
  strike: string | null;
}

/** The compact market a list of someone's markets shows (watchlists). */
export type MarketBrief = Pick<
  MarketSummaryFields,
  'id' | 'slug' | 'title' | 'status' | 'last_price' | 'best_bid' | 'best_ask'
>;

/** The prices of a market as the engine that holds it has them (REST, ticker, sandbox price moves). */
export function marketPrices(s: MarketSummary): MarketPrices {
  return { best_bid: s.bestBid, best_ask: s.bestAsk, last_price: s.lastPrice, volume: s.volume };
}

/**
 * The prices of a market its engine does not hold: the stored row's last trade and volume, no
 * book. The engine is ahead of the stored row between commits, so it wins whenever it has one.
 */
function storedPrices(m: Pick<StoredMarket, 'lastPrice' | 'volume'>): MarketPrices {
  return { best_bid: null, best_ask: null, last_price: m.lastPrice, volume: m.volume };
}

/**
 * The summary of a stored market priced by the engine of the caller's environment. Its status is
 * the stored one, which is the record: after a restart the engine holds a resolved market CLOSED.
 */
export function marketSummary(m: StoredMarket, s: MarketSummary | undefined): MarketSummaryFields {
  return {
    id: m.id,
    slug: m.slug,
    title: m.title,
    description: m.description,
    category: m.category,
    status: m.status,
    outcome: m.outcome,
    close_time: m.closeTime,
    index: m.indexSymbol,
    strike: m.strikeCents === null ? null : formatUsd(m.strikeCents),
    ...pricesOf(m, s),
  };
}

/** The engine's prices when it holds the market, else the stored row's. */
function pricesOf(m: Pick<StoredMarket, 'lastPrice' | 'volume'>, s: MarketSummary | undefined) {
  return s === undefined ? storedPrices(m) : marketPrices(s);
}

/** What a brief needs of the stored market (a list's join may read only these columns). */
export type StoredBrief = Pick<
  StoredMarket,
  'id' | 'slug' | 'title' | 'status' | 'lastPrice' | 'volume'
>;

/** {@link marketSummary} cut down to its brief: the same values by the same rules, fewer fields. */
export function marketBrief(m: StoredBrief, s: MarketSummary | undefined): MarketBrief {
  const { last_price, best_bid, best_ask } = pricesOf(m, s);
  return {
    id: m.id,
    slug: m.slug,
    title: m.title,
    status: m.status,
    last_price,
    best_bid,
    best_ask,
  };
}
