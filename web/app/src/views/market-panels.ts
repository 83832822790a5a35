// The panels a market page shows after its own: each feature that works on one market adds its
// panel here (a function of the context and the market, returning the panel's element).
import type { Ctx } from '../context.js';
import type { Market } from '../types.js';
import { commentsPanel } from './comments.js';
import { rfqPanel } from './rfq.js';
import { watchPanel } from './watchlists.js';

export type MarketPanel = (ctx: Ctx, market: Market) => HTMLElement;

export const MARKET_PANELS: MarketPanel[] = [rfqPanel, watchPanel, commentsPanel];

/** Inside an ephemeral world: RFQ stays in the shared paper world (a world answers 422 for it). */
export const WORLD_MARKET_PANELS: MarketPanel[] = [watchPanel, commentsPanel];
