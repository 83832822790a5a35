// The portfolio page: wallet and transactions, open orders, positions and the account's sandbox
// controls.
import type { Ctx } from '../context.js';
import { fill, h } from '../dom.js';
import { ordersPanel, positionsPanel, walletPanel } from './portfolio-panels.js';
import { sandboxPanel } from './sandbox.js';

export function portfolioView(ctx: Ctx, root: HTMLElement): void {
  fill(
    root,
    h('h1', { text: 'Portfolio' }),
    h(
      'div',
      { class: 'grid' },
      walletPanel(ctx),
      positionsPanel(ctx),
      ordersPanel(ctx),
      sandboxPanel(ctx),
    ),
  );
}
