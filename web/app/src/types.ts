// The API's shapes the app reads (see /api/v1/openapi.json and /api/v1/asyncapi.json).

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

export interface Market {
  id: string;
  slug: string;
  title: string;
  description: string;
  category: string;
  status: 'OPEN' | 'HALTED' | 'CLOSED' | 'RESOLVED';
  outcome: 'YES' | 'NO' | null;
  close_time: string;
  best_bid: number | null;
  best_ask: number | null;
  last_price: number | null;
  volume: number;
}

export interface Ticker {
  market_id: string;
  status: string;
  best_bid: number | null;
  best_ask: number | null;
  last_price: number | null;
  volume: number;
}

export interface Level {
  price: number;
  quantity: number;
}

export interface Book {
  bids: Level[];
  asks: Level[];
}

export interface Trade {
  id: string;
  market_id: string;
  price: number;
  no_price: number;
  quantity: number;
  taker_side: 'YES' | 'NO';
  /** BOOK: matched on the order book; RFQ: an accepted quote. */
  source?: 'BOOK' | 'RFQ';
  created_at: string;
}

export interface Order {
  id: string;
  market_id: string;
  action: 'BUY' | 'SELL';
  side: 'YES' | 'NO';
  type: 'LIMIT' | 'MARKET' | 'RFQ';
  price: number | null;
  quantity: number;
  filled_quantity: number;
  remaining_quantity: number;
  average_fill_price: number | null;
  status: string;
  cancel_reason: string | null;
  time_in_force: string;
  created_at: string;
}

export interface Wallet {
  balance_cents: number;
  reserved_cents: number;
  available_cents: number;
}

export interface Transaction {
  id: string;
  type: string;
  amount_cents: number;
  balance_after_cents: number;
  reference_id: string | null;
  created_at: string;
}

export interface Position {
  market_id: string;
  side: 'YES' | 'NO' | null;
  quantity: number;
  average_price: number | null;
  cost_basis_cents: number;
  realized_pnl_cents: number;
  unrealized_pnl_cents: number | null;
  mark_price: number | null;
}

export interface Rfq {
  id: string;
  market_id: string;
  quantity: number;
  status: 'OPEN' | 'FILLED' | 'CANCELLED' | 'EXPIRED';
  expires_at: string;
  accepted_quote_id: string | null;
  trade_id: string | null;
  created_at: string;
}

/** A responder's two-way quote on an RFQ, in YES cents. */
export interface RfqQuote {
  id: string;
  rfq_id: string;
  bid: number | null;
  ask: number | null;
  quantity: number;
  status: 'OPEN' | 'ACCEPTED' | 'REPLACED' | 'CANCELLED' | 'EXPIRED';
  expires_at: string;
  created_at: string;
}

/** POST /rfq/quotes/{id}/accept. */
export interface AcceptedQuote {
  rfq: Rfq;
  quote: RfqQuote;
  order: Order;
  trade: Trade;
}

/** A message of the private `rfq` channel (see the AsyncAPI document). */
export type RfqEvent =
  | { event: 'quote.received'; rfq_id: string; market_id: string; quote: RfqQuote }
  | { event: 'quote.cancelled'; rfq_id: string; quote_id: string; status: RfqQuote['status'] }
  | { event: 'quote.accepted'; rfq: Rfq; quote: RfqQuote; trade: Trade }
  | { event: 'rfq.expired'; rfq: Rfq }
  | { event: 'rfq.created' | 'rfq.closed'; [k: string]: unknown };

export interface Comment {
  id: string;
  market_id: string;
  parent_id: string | null;
  author: { id: string; username: string; display_name: string | null };
  body: string | null;
  status: 'VISIBLE' | 'HIDDEN' | 'DELETED';
  reply_count: number;
  created_at: string;
}

export interface Watchlist {
  id: string;
  name: string;
  markets: {
    id: string;
    title: string;
    status: string;
    best_bid: number | null;
    best_ask: number | null;
    last_price: number | null;
  }[];
}

export interface Me {
  user: { id: string; email: string; username: string };
  credential: {
    type: 'API_KEY' | 'SESSION';
    key_id: string | null;
    environment: 'live' | 'test';
    scopes: string[];
  };
}
