// The sandbox controls (test keys only): reset the paper account, add paper money and, on a
// market page, move the market's reference price or resolve it.
import { post } from '../api.js';
import { type Ctx, Notice } from '../context.js';
import { button, dollars, field, h, input, panel } from '../dom.js';
import type { Market } from '../types.js';

export function sandboxPanel(_ctx: Ctx, market?: Market): HTMLElement {
  const notice = new Notice();
  const amount = input('amount', {
    type: 'number',
    min: '0.01',
    step: '0.01',
    value: '1000',
    inputmode: 'decimal',
  });
  const fund = h(
    'form',
    { class: 'row', attrs: { 'aria-label': 'Add paper money' } },
    field('Amount ($)', amount),
    h('button', { text: 'Add paper money', attrs: { type: 'submit' } }),
  );
  fund.addEventListener('submit', (e) => {
    e.preventDefault();
    const amountCents = Math.round(Number(amount.value) * 100);
    void notice.run(
      () => post<{ balance_cents?: number }>('/sandbox/wallet/fund', { amount_cents: amountCents }),
      () => `Added ${dollars(amountCents)} of paper money`,
    );
  });
  const reset = button('Reset paper account', () => {
    void notice.run(
      () => post<{ cancelled_orders: number }>('/sandbox/reset'),
      (r) => `Paper account reset; ${r.cancelled_orders} open order(s) cancelled`,
    );
  });

  const forMarket: HTMLElement[] = [];
  if (market !== undefined) {
    const price = input('reference_price', {
      type: 'number',
      min: '1',
      max: '99',
      step: '1',
      value: '50',
      inputmode: 'numeric',
    });
    const move = h(
      'form',
      { class: 'row', attrs: { 'aria-label': 'Move the price' } },
      field('Reference price (¢)', price),
      h('button', { text: 'Move price', attrs: { type: 'submit' } }),
    );
    move.addEventListener('submit', (e) => {
      e.preventDefault();
      void notice.run(
        () =>
          post<{ reference_price: number; best_bid: number | null; best_ask: number | null }>(
            `/sandbox/markets/${market.id}/price`,
            { price: Number(price.value) },
          ),
        (r) =>
          `Reference price now ${r.reference_price}¢ (bid ${r.best_bid ?? '—'}¢, ask ${r.best_ask ?? '—'}¢)`,
      );
    });
    const resolve = (outcome: 'YES' | 'NO'): void => {
      void notice.run(
        () =>
          post<{ your_payout_cents?: number }>(`/sandbox/markets/${market.id}/resolve`, {
            outcome,
          }),
        (r) => `Resolved ${outcome}; your payout ${dollars(r.your_payout_cents ?? 0)}`,
      );
    };
    forMarket.push(
      move,
      h(
        'div',
        { class: 'row', attrs: { role: 'group', 'aria-label': 'Resolve this market' } },
        button('Resolve YES', () => resolve('YES')),
        button('Resolve NO', () => resolve('NO')),
      ),
    );
  }
  return panel(
    'Sandbox controls',
    h('div', { class: 'row' }, reset),
    fund,
    ...forMarket,
    notice.el,
  );
}
