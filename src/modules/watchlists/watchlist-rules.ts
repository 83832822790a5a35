import { DomainError, validationFailed } from '../../common/errors/domain-error.js';
import { MARKET_ID } from '../../common/ids/id-patterns.js';

/** Lists a user may keep in one world. */
export const MAX_WATCHLISTS = 20;
/** Markets one list may hold. */
export const MAX_WATCHLIST_MARKETS = 200;
/** Code points of a name. */
export const MAX_NAME_LENGTH = 64;

/**
 * The name as compared for uniqueness: Unicode NFC (so a precomposed "Ä" and "A" + combining
 * diaeresis are one name), then lower-cased by Unicode rules ("Ärger" and "ärger" collide, as do
 * "Crypto" and "cRYPTO"). The name itself is stored and returned as sent.
 */
export function nameKey(name: string): string {
  return name.normalize('NFC').toLowerCase();
}

/** 422 WATCHLIST_LIMIT_REACHED with the limit that was reached in details.limit. */
export function limitReached(limit: number, message: string): DomainError {
  return new DomainError('WATCHLIST_LIMIT_REACHED', message, { limit });
}

/**
 * The `market_ids` of a body as a list the service may store: each one shaped like a market id
 * (else 400 naming `market_ids[i]`), none twice (else 400 naming `market_ids`), at most
 * {@link MAX_WATCHLIST_MARKETS} (else 422 WATCHLIST_LIMIT_REACHED, details.limit). Whether the
 * markets exist is the world's to say, later.
 */
export function checkedMarketIds(ids: readonly string[]): string[] {
  const malformed = ids.flatMap((id, i) =>
    MARKET_ID.test(id)
      ? []
      : [{ field: `market_ids[${i}]`, message: 'must be a market id (mkt_ followed by a-z, 0-9)' }],
  );
  if (malformed.length > 0) throw validationFailed(malformed);
  const first = new Map<string, number>();
  const repeats = ids.flatMap((id, i) => {
    const earlier = first.get(id);
    if (earlier === undefined) first.set(id, i);
    return earlier === undefined
      ? []
      : [
          {
            field: 'market_ids',
            message: `market_ids must not repeat an id: market_ids[${i}] repeats market_ids[${earlier}] (${id})`,
          },
        ];
  });
  if (repeats.length > 0) throw validationFailed(repeats);
  if (ids.length > MAX_WATCHLIST_MARKETS) {
    throw limitReached(
      MAX_WATCHLIST_MARKETS,
      `A watchlist holds at most ${MAX_WATCHLIST_MARKETS} markets; ${ids.length} were sent`,
    );
  }
  return [...ids];
}
