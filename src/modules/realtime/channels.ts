import type { EngineEvent, MatchingEngine } from '../../engine/index.js';
import { HOUSE_ACCOUNT } from '../trading/engine-runtime.js';

/** What the messages read of the engine beside the events: accounts and market prices. */
type AccountAndMarketReads = Pick<MatchingEngine, 'getAccount' | 'marketSummary'>;
import { ledgerTypeOf } from '../trading/stores/ledger.store.js';
import { marketPrices } from '../markets/market-summary.js';
import { markPrice, positionDto } from '../positions/position-mapper.js';
import type { Environment } from '../../common/environment.js';
import { MARKET_ID_SOURCE } from '../../common/ids/id-patterns.js';
import { iso } from '../../common/clock/iso.js';
import {
  orderCancelledPayload,
  orderExpiredPayload,
  orderProgressPayload,
} from '../trading/order-payloads.js';

/**
 * The private channels of a user in one world. `notifications` carries each in-app notification
 * as it is stored (not engine events: see RealtimeHub); the others come from committed batches.
 */
export const PRIVATE_CHANNELS = [
  'orders',
  'fills',
  'positions',
  'wallet',
  'notifications',
  'rfq',
] as const;
export type PrivateChannel = (typeof PRIVATE_CHANNELS)[number];

/** Every channel a client can subscribe to, as the protocol names them. */
export const CHANNEL_PATTERNS = [
  'ticker',
  'orderbook:<market_id>',
  'trades:<market_id>',
  'crypto:<symbol>',
  ...PRIVATE_CHANNELS,
] as const;

/**
 * Scopes of which a credential needs one for each private channel: `rfq` serves requesters
 * (orders:read) and responders (rfq:respond) alike.
 */
export const PRIVATE_SCOPE: Record<PrivateChannel, readonly string[]> = {
  orders: ['orders:read'],
  fills: ['orders:read'],
  positions: ['wallet:read'],
  wallet: ['wallet:read'],
  notifications: ['notifications:read'],
  rfq: ['orders:read', 'rfq:respond'],
};

const MARKET_CHANNEL = new RegExp(`^(orderbook|trades):(${MARKET_ID_SOURCE.slice(1, -1)})$`);

/** crypto:<symbol>: any symbol-shaped name parses; the hub refuses one no engine walks. */
const CRYPTO_CHANNEL = /^crypto:([A-Z0-9]{1,10}-[A-Z0-9]{1,10})$/;

export type ParsedChannel =
  | { kind: 'ticker' }
  | { kind: 'crypto'; symbol: string }
  | { kind: 'orderbook' | 'trades'; marketId: string }
  | { kind: 'private'; name: PrivateChannel };

export function parseChannel(name: unknown): ParsedChannel | null {
  if (typeof name !== 'string') return null;
  if (name === 'ticker') return { kind: 'ticker' };
  if ((PRIVATE_CHANNELS as readonly string[]).includes(name))
    return { kind: 'private', name: name as PrivateChannel };
  const c = CRYPTO_CHANNEL.exec(name);
  if (c !== null) return { kind: 'crypto', symbol: c[1] };
  const m = MARKET_CHANNEL.exec(name);
  if (m === null) return null;
  return { kind: m[1] as 'orderbook' | 'trades', marketId: m[2] };
}

/** A message to route: a public channel (per environment) or a user's private channel. */
export type Outgoing =
  | { scope: 'public'; channel: string; data: unknown }
  | { scope: 'private'; userId: string; channel: PrivateChannel; data: unknown };

/**
 * Turns one committed batch into channel messages, in event order. Ticker updates come once per
 * touched market at the end of the batch.
 */
export function route(
  events: readonly EngineEvent[],
  engine: AccountAndMarketReads,
  environment: Environment,
): Outgoing[] {
  const out: Outgoing[] = [];
  const touched = new Set<string>();
  // Accounts whose reserved amount an order moved (an order rested, was amended or cancelled).
  // Those with a balance change in the batch hear of it there; the others get a RESERVATION.
  const ownerOf = new Map<string, string>();
  const reserveMoved = new Set<string>();
  // The reserved amount is known after the whole batch only (the engine settles reservations at
  // the end of a command): it goes on each account's last balance message of the batch, and the
  // earlier ones, each for one ledger row on the way, carry null rather than a later figure.
  // Index of each account's last balance.changed in `events`.
  const lastBalance = new Map<string, number>();
  for (let i = 0; i < events.length; i++) {
    const e = events[i];
    if (e.type === 'balance.changed') lastBalance.set(e.accountId, i);
  }
  const priv = (userId: string | undefined, channel: PrivateChannel, data: unknown): void => {
    if (userId !== undefined && userId !== HOUSE_ACCOUNT)
      out.push({ scope: 'private', userId, channel, data });
  };
  for (let index = 0; index < events.length; index++) {
    const e = events[index];
    switch (e.type) {
      case 'book.level':
        out.push({
          scope: 'public',
          channel: `orderbook:${e.marketId}`,
          data: {
            kind: 'delta',
            side: e.side === 'BID' ? 'bids' : 'asks',
            price: e.price,
            quantity: e.quantity,
          },
        });
        touched.add(e.marketId);
        break;
      case 'trade': {
        out.push({
          scope: 'public',
          channel: `trades:${e.marketId}`,
          data: {
            id: e.id,
            market_id: e.marketId,
            price: e.price,
            no_price: 100 - e.price,
            quantity: e.quantity,
            // As GET /markets/{id}/trades: what the taker bought.
            taker_side: e.takerBookSide === 'BID' ? 'YES' : 'NO',
            source: e.source,
            created_at: iso(e.timestamp),
          },
        });
        touched.add(e.marketId);
        for (const [orderId, userId, side, liquidity] of [
          [e.makerOrderId, e.makerAccountId, e.makerSide, 'MAKER'],
          [e.takerOrderId, e.takerAccountId, e.takerSide, 'TAKER'],
        ] as const) {
          priv(userId, 'fills', {
            id: e.id,
            order_id: orderId,
            market_id: e.marketId,
            side,
            price: side === 'YES' ? e.price : 100 - e.price,
            yes_price: e.price,
            quantity: e.quantity,
            liquidity,
            created_at: iso(e.timestamp),
          });
        }
        break;
      }
      case 'order.accepted':
        ownerOf.set(e.order.id, e.order.accountId);
        priv(e.order.accountId, 'orders', {
          event: 'order.accepted',
          order_id: e.order.id,
          client_order_id: e.order.clientOrderId,
          market_id: e.order.marketId,
          action: e.order.action,
          side: e.order.side,
          type: e.order.type,
          price: e.order.price,
          quantity: e.order.quantity,
          status: e.order.status,
          self_trade_prevention: e.order.selfTradePrevention,
        });
        break;
      case 'order.updated':
        priv(e.accountId, 'orders', {
          event: 'order.updated',
          ...orderProgressPayload(e),
        });
        break;
      case 'order.rested': {
        const owner = ownerOf.get(e.orderId);
        if (owner !== undefined) reserveMoved.add(owner);
        break;
      }
      case 'order.cancelled':
        reserveMoved.add(e.accountId);
        priv(e.accountId, 'orders', {
          event: 'order.cancelled',
          ...orderCancelledPayload(e),
        });
        break;
      case 'order.expired':
        priv(e.accountId, 'orders', { event: 'order.expired', ...orderExpiredPayload(e) });
        break;
      case 'order.amended':
        reserveMoved.add(e.accountId);
        priv(e.accountId, 'orders', {
          event: 'order.amended',
          order_id: e.orderId,
          price: e.price,
          quantity: e.quantity,
          remaining_quantity: e.remainingQuantity,
          requeued: e.requeued,
        });
        break;
      case 'position.changed':
        priv(
          e.accountId,
          'positions',
          positionMessage(engine, e.marketId, e.yes, e.no, e.yesCost, e.noCost, e.realizedPnl),
        );
        break;
      case 'position.settled':
        priv(e.accountId, 'positions', {
          ...flatPosition(engine, e.marketId, e.realizedPnl),
          settled: { outcome: e.outcome, payout_cents: e.payout },
        });
        break;
      case 'balance.changed': {
        const account =
          lastBalance.get(e.accountId) === index ? engine.getAccount(e.accountId) : undefined;
        priv(e.accountId, 'wallet', {
          balance_cents: e.balance,
          delta_cents: e.delta,
          reason: ledgerTypeOf(e.reason, environment),
          reserved_cents: account?.reserved ?? null,
          available_cents: account?.available ?? null,
        });
        break;
      }
      case 'account.reset':
        // A sandbox reset drops every open order and position at once, with no event per order:
        // one orders message says so, and each market the account was in gets a flat position.
        // The wallet hears of it through the reset's own balance.changed (reason RESET).
        priv(e.accountId, 'orders', {
          event: 'account.reset',
          cancelled_orders: e.cancelledOrders,
        });
        for (const marketId of e.marketIds) {
          priv(e.accountId, 'positions', flatPosition(engine, marketId, 0));
        }
        break;
      case 'market.status':
      case 'market.resolved':
        touched.add(e.marketId);
        break;
      default:
        break;
    }
  }
  for (const accountId of reserveMoved) {
    if (lastBalance.has(accountId)) continue;
    const account = engine.getAccount(accountId);
    if (account === undefined) continue;
    priv(accountId, 'wallet', {
      balance_cents: account.balance,
      delta_cents: 0,
      reason: 'RESERVATION',
      reserved_cents: account.reserved,
      available_cents: account.available,
    });
  }
  for (const marketId of touched) {
    const data = tickerData(engine, marketId);
    if (data !== undefined) out.push({ scope: 'public', channel: 'ticker', data });
  }
  return out;
}

/**
 * A positions message: the fields GET /positions/cursor shows (side, quantity, average_price,
 * cost_basis_cents, realized_pnl_cents, unrealized_pnl_cents, mark_price, marked at the engine's
 * current prices), and the channel's own both-sides fields it always had (yes, no,
 * yes_cost_cents, no_cost_cents), kept for the clients that read them.
 */
function positionMessage(
  engine: AccountAndMarketReads,
  marketId: string,
  yes: number,
  no: number,
  yesCost: number,
  noCost: number,
  realizedPnl: number,
): object {
  const rest = positionDto(
    {
      market_id: marketId,
      yes_qty: yes,
      no_qty: no,
      yes_cost: yesCost,
      no_cost: noCost,
      realized_pnl: realizedPnl,
    },
    markPrice(engine.marketSummary(marketId)),
  );
  return { ...rest, yes, no, yes_cost_cents: yesCost, no_cost_cents: noCost };
}

/** A positions message holding nothing (after a settlement, or a sandbox reset). */
function flatPosition(
  engine: AccountAndMarketReads,
  marketId: string,
  realizedPnl: number,
): object {
  return positionMessage(engine, marketId, 0, 0, 0, 0, realizedPnl);
}

/** The ticker message of one market, from the engine's summary; undefined for no such market. */
export function tickerData(engine: AccountAndMarketReads, marketId: string): object | undefined {
  const s = engine.marketSummary(marketId);
  if (s === undefined) return undefined;
  return { market_id: marketId, status: s.status, ...marketPrices(s) };
}
