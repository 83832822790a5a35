/** Public surface of the matching engine (framework-free). */
export { MatchingEngine } from './matching-engine.js';
export type { EngineOptions } from './engine-state.js';
export type { AddMarketOptions } from './engine-admin.js';
export type { LedgerTotals } from './engine-ledger.js';
export type { RestoreOrderInput, RestorePositionInput } from './engine-restore.js';
export type {
  CrossQuoteRequest,
  CrossQuoteResult,
  HoldRequest,
  RestoreHoldInput,
} from './engine-rfq.js';
export type { HoldSnapshot } from './holds.js';
export { ManualClock, SequentialIdGenerator } from './clock.js';
export { checkInvariants, recomputeReserve } from './invariants.js';
export { PriceFeed, mulberry32, marketSeed, type PriceFeedOptions } from './price-feed.js';
export {
  CryptoWalk,
  type CryptoWalkOptions,
  type CryptoWalkSymbol,
  type CryptoWalkState,
} from './crypto-walk.js';
export { HouseMarketMaker, type HouseMarketMakerOptions } from './house-market-maker.js';
export { bookPriceOf, bookSideOf } from './order.js';
export type * from './events.js';
export type * from './types.js';
export { MAX_ORDER_QUANTITY } from './types.js';
export {
  SELF_TRADE_PREVENTION_MODES,
  DEFAULT_SELF_TRADE_PREVENTION,
  selfTradeAction,
} from './self-trade.js';
