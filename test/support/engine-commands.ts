import type { MatchingEngine } from '../../src/engine/index.js';

/**
 * An engine command for EngineRuntime specs: account u1 rests a BUY YES LIMIT of 1 at 10 in
 * `marketId` (mkt_a), tagged with API key key_1 and the given client order id (if any).
 */
export const restingBuy =
  (clientOrderId?: string, marketId = 'mkt_a') =>
  (e: MatchingEngine) =>
    e.placeOrder({
      accountId: 'u1',
      marketId,
      action: 'BUY',
      side: 'YES',
      type: 'LIMIT',
      price: 10,
      quantity: 1,
      tag: 'key_1',
      clientOrderId,
    });
