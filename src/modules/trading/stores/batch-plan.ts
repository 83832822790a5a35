import type { EngineEvent, OrderSnapshot } from '../../../engine/index.js';

/**
 * Which writes of one committed batch are superseded by a later write of the same batch, so
 * TradingRepository.apply leaves them out: fewer statements per order, the same rows at COMMIT.
 * A batch is every command of one event-loop turn (the group commit), so an order that trades
 * with the house three times writes its position, its account and the house's once each, not
 * three times, and a market or IOC order is inserted with its final state instead of inserted
 * and then updated. Nothing reads between a batch's writes, so only the last state of a row
 * counts; the writes that carry history (trades, ledger rows) are all kept.
 *
 * - Positions (position.changed, position.settled): an upsert of the whole row; only the last
 *   per account and market is written.
 * - Accounts (balance.changed): the balance upsert only for the last change per account, with
 *   the created_at of the first (the row's insert time if it did not exist); every ledger row
 *   is kept. Not coalesced in a batch that creates or resets an account.
 * - Markets (trade): one last-trade update per market, at its last trade, with the batch's
 *   volume summed.
 * - Orders: an order accepted in the batch and updated, cancelled or expired later in it (and
 *   not amended) is inserted as it ends the batch; another order's fill update is written only
 *   for its last fill in the batch. House orders are not stored and are left alone.
 */
export interface BatchPlan {
  /**
   * Per event: {@link WRITE}, {@link SKIP}, {@link LEDGER_ONLY} (balance.changed) or
   * {@link MARKET_SKIPPED} (trade).
   */
  readonly action: Uint8Array;
  /** Orders accepted in the batch, as they end it (their later events are SKIP). */
  readonly finalOrders: Map<string, OrderSnapshot>;
  /** The created_at (ISO) of the account upserts that are written. */
  readonly accountCreatedAt: Map<string, string>;
  /** Per market: the volume of the batch's trades, written with its last trade. */
  readonly marketVolume: Map<string, number>;
}

export const WRITE = 0;
export const SKIP = 1;
/** balance.changed: the ledger row only (a later change of the batch writes the balance). */
export const LEDGER_ONLY = 2;
/** trade: the trade row only (a later trade of the batch updates the market). */
export const MARKET_SKIPPED = 3;

/** Plans a batch of at least two events (a single event is written as it is). */
export function planBatch(
  events: readonly EngineEvent[],
  houseAccountId: string,
  iso: (ms: number) => string,
): BatchPlan {
  const n = events.length;
  const action = new Uint8Array(n);
  const finalOrders = new Map<string, OrderSnapshot>();
  const accountCreatedAt = new Map<string, string>();
  const marketVolume = new Map<string, number>();
  /** Later in the batch (walked backwards): keys whose row a later write sets. */
  const laterPosition = new Set<string>();
  const laterFill = new Set<string>();
  const accepted = new Set<string>();
  const amended = new Set<string>();
  let accountsCoalesced = true;
  for (const e of events) {
    if (e.type === 'order.accepted') {
      if (e.order.accountId !== houseAccountId) accepted.add(e.order.id);
    } else if (e.type === 'order.amended') amended.add(e.orderId);
    else if (e.type === 'account.created' || e.type === 'account.reset') accountsCoalesced = false;
  }
  for (const id of amended) accepted.delete(id);
  for (let i = n - 1; i >= 0; i--) {
    const e = events[i];
    switch (e.type) {
      case 'position.changed':
      case 'position.settled': {
        const key = `${e.accountId}\u0000${e.marketId}`;
        if (laterPosition.has(key)) action[i] = SKIP;
        else laterPosition.add(key);
        break;
      }
      case 'balance.changed': {
        if (!accountsCoalesced || e.reason === 'RESET') break;
        // Walking backwards: an account already here changes again later in the batch, and the
        // last assignment is the batch's first change of the account (its created_at).
        if (accountCreatedAt.has(e.accountId)) action[i] = LEDGER_ONLY;
        accountCreatedAt.set(e.accountId, iso(e.timestamp));
        break;
      }
      case 'trade': {
        // A market already here trades again later in the batch, which updates it.
        const volume = marketVolume.get(e.marketId);
        if (volume !== undefined) action[i] = MARKET_SKIPPED;
        marketVolume.set(e.marketId, (volume ?? 0) + e.quantity);
        break;
      }
      case 'order.updated':
        if (e.accountId === houseAccountId) break;
        if (accepted.has(e.orderId)) action[i] = SKIP;
        else if (laterFill.has(e.orderId)) action[i] = SKIP;
        else laterFill.add(e.orderId);
        break;
      case 'order.cancelled':
      case 'order.expired':
        if (e.accountId !== houseAccountId && accepted.has(e.orderId)) action[i] = SKIP;
        break;
      default:
        break;
    }
  }
  if (accepted.size > 0) {
    // Forwards: each accepted order's row as the batch leaves it.
    for (const e of events) {
      switch (e.type) {
        case 'order.accepted':
          if (accepted.has(e.order.id)) finalOrders.set(e.order.id, e.order);
          break;
        case 'order.updated': {
          const o = finalOrders.get(e.orderId);
          if (o !== undefined) {
            finalOrders.set(e.orderId, {
              ...o,
              filledQuantity: e.filledQuantity,
              fillCost: e.fillCost,
              status: e.status,
              updatedAt: e.updatedAt,
            });
          }
          break;
        }
        case 'order.cancelled':
        case 'order.expired': {
          const o = finalOrders.get(e.orderId);
          if (o !== undefined) {
            finalOrders.set(e.orderId, {
              ...o,
              status: e.type === 'order.cancelled' ? 'CANCELLED' : 'EXPIRED',
              cancelReason: e.reason,
              updatedAt: e.updatedAt,
            });
          }
          break;
        }
        default:
          break;
      }
    }
  }
  return { action, finalOrders, accountCreatedAt, marketVolume };
}
