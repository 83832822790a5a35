// The panels a market page shows after its own: each feature that works on one market adds its
// panel here (a function of the context and the market, returning the panel's element).
import type { Ctx } from '../context.js';
import type { Market } from '../types.js';
import { commentsPanel } from './comments.js';
import { rfqPanel } from './rfq.js';
import { watchPanel } from './watchlists.js';

export type MarketPanel = (ctx: Ctx, market: Market) => HTMLElement;

/** The same in the shared paper world and in an ephemeral world: each serves its own records. */
export const MARKET_PANELS: MarketPanel[] = [rfqPanel, watchPanel, commentsPanel];
