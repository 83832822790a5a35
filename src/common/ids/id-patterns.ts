/**
 * Shapes of the ids the API accepts in paths and bodies (see IdGenerator and the seed's market
 * ids). Anything else is answered as unknown (404) or invalid (400) without touching storage.
 */
export const MARKET_ID_SOURCE = '^mkt_[a-z0-9]{1,36}$';
export const ORDER_ID_SOURCE = '^ord_[a-z0-9]{1,40}$';

export const MARKET_ID = new RegExp(MARKET_ID_SOURCE);
export const ORDER_ID = new RegExp(ORDER_ID_SOURCE);

/** A comment id as IdGenerator writes it (`cmt_` + Crockford base32: time, counter, random). */
export const COMMENT_ID = /^cmt_[0-9a-z]{1,40}$/;

/** A watchlist id as IdGenerator writes it (`wl_` + Crockford base32). */
export const WATCHLIST_ID = /^wl_[a-z0-9]{1,40}$/;
/** A sports event id as the seeder derives it from the event's slug (`spe_` + 20 hex digits). */
export const SPORTS_EVENT_ID = /^spe_[a-z0-9]{1,36}$/;
/** An RFQ id as IdGenerator writes it (`rfq_` + Crockford base32). */
export const RFQ_ID = /^rfq_[a-z0-9]{1,40}$/;
/** A quote id as IdGenerator writes it (`quo_` + Crockford base32). */
export const QUOTE_ID = /^quo_[a-z0-9]{1,40}$/;
