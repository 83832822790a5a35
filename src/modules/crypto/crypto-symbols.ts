import { readSeed } from '../../database/seed-files.js';
import type { CryptoWalkSymbol } from '../../engine/index.js';
import { parseUsd } from './usd.js';

/** The reference indices every engine walks (CONTRACT.md "Sports and crypto"). */
export const CRYPTO_SYMBOLS = ['BTC-USD', 'ETH-USD', 'SOL-USD'] as const;
export type CryptoSymbol = (typeof CRYPTO_SYMBOLS)[number];

export function isCryptoSymbol(value: unknown): value is CryptoSymbol {
  return typeof value === 'string' && (CRYPTO_SYMBOLS as readonly string[]).includes(value);
}

/** Candle intervals and their bucket length in ms. */
export const CANDLE_INTERVALS = { '1m': 60_000, '1h': 3_600_000, '1d': 86_400_000 } as const;
export type CandleInterval = keyof typeof CANDLE_INTERVALS;
export const CANDLE_INTERVAL_NAMES = Object.keys(CANDLE_INTERVALS) as CandleInterval[];

/** How long candles are kept, in days, per interval (older ones go as new buckets start). */
export const CANDLE_RETENTION_DAYS: Record<CandleInterval, number> = {
  '1m': 7,
  '1h': 90,
  '1d': 1826,
};

/** The seed of the live walk: fixed, so every live deployment walks the same path from a fresh start. */
export const LIVE_CRYPTO_SEED = 0x4c495645;

interface CryptoSeed {
  symbols: { symbol: string; start_price: string; sigma: number }[];
}

/** seeds/crypto.json: each symbol's starting price and per-step sigma; a bad file stops the start. */
export function cryptoSeedSymbols(): CryptoWalkSymbol[] {
  const seed = readSeed<CryptoSeed>('crypto.json');
  return CRYPTO_SYMBOLS.map((symbol) => {
    const s = seed.symbols.find((x) => x.symbol === symbol);
    const cents = s === undefined ? null : parseUsd(s.start_price);
    if (s === undefined || cents === null || cents < 1 || typeof s.sigma !== 'number') {
      throw new Error(`seeds/crypto.json: ${symbol} needs a start_price "123.45" and a sigma`);
    }
    return { symbol, startCents: cents, sigma: s.sigma };
  });
}
