// Your open orders (amend, cancel), positions, wallet and transactions: on the portfolio page
// for every market, and on a market page for that one. Each refreshes on its private channel.
import { del, get, patch } from '../api.js';
import { titleOf } from '../catalog.js';
import { type Ctx, debounce, Notice } from '../context.js';
import { button, cents, dollars, field, fill, h, input, panel, time } from '../dom.js';
import type { Order, Page, Position, Transaction, Wallet } from '../types.js';
import { describeOrder } from './ticket.js';

function marketLink(ctx: Ctx, id: string): HTMLAnchorElement {
  const a = h('a', {
    text: id,
    attrs: { href: `/app/markets/${id}` },
    on: {
      click: (e) => {
        e.preventDefault();
        ctx.navigate(`/markets/${id}`);
      },
    },
  });
  void titleOf(id).then((t) => {
    a.textContent = t;
  });
  return a;
}

/** Subscribes to a private channel and refreshes on its events and after a reconnect. */
function live(ctx: Ctx, channel: string, refresh: () => Promise<void>): void {
  const soon = debounce(() => void refresh());
  ctx.onLeave(ctx.rt.subscribe(channel, soon));
  ctx.onResync(soon);
  void refresh();
}

function orderRow(ctx: Ctx, o: Order, notice: Notice, refresh: () => Promise<void>): HTMLElement {
  const price = input('price', {
    type: 'number',
    min: '1',
    max: '99',
    step: '1',
    value: String(o.price ?? ''),
  });
  const qty = input('quantity', { type: 'number', min: '1', step: '1', value: String(o.quantity) });
  const amend = h(
    'form',
    { class: 'amend row', attrs: { 'aria-label': `Amend order ${o.id}` } },
    field('New price (¢)', price),
    field('New quantity', qty),
    h('button', { text: 'Amend', attrs: { type: 'submit' } }),
  );
  amend.addEventListener('submit', (e) => {
    e.preventDefault();
    const body: Record<string, number> = {};
    if (Number(price.value) !== o.price) body.price = Number(price.value);
    if (Number(qty.value) !== o.quantity) body.quantity = Number(qty.value);
    void notice
      .run(
        () => patch<Order>(`/orders/${o.id}`, body),
        (r) => `Amended: ${describeOrder(r)}`,
      )
      .then(refresh);
  });
  return h(
    'li',
    { class: 'order', attrs: { 'data-order-id': o.id } },
    h('div', {}, marketLink(ctx, o.market_id)),
    h(
      'div',
      { class: 'order-line' },
      h('span', { text: describeOrder(o) }),
      ' ',
      h('span', { class: 'muted', text: time(o.created_at) }),
    ),
    h(
      'div',
      { class: 'row' },
      o.type === 'LIMIT' ? amend : null,
      button('Cancel order', () => {
        void notice
          .run(
            () => del<Order>(`/orders/${o.id}`),
            (r) => `Cancelled: ${describeOrder(r)}`,
          )
          .then(refresh);
      }),
    ),
  );
}

export function ordersPanel(ctx: Ctx, marketId?: string): HTMLElement {
  const notice = new Notice();
  const list = h('ul', { class: 'orders', attrs: { 'aria-label': 'Open orders' } });
  const refresh = async (): Promise<void> => {
    await notice.run(async () => {
      const [open, partial] = await Promise.all(
        ['OPEN', 'PARTIALLY_FILLED'].map((status) =>
          get<Page<Order>>('/orders', { status, market_id: marketId, limit: 100 }),
        ),
      );
      const orders = [...open.data, ...partial.data].sort((a, b) =>
        b.created_at.localeCompare(a.created_at),
      );
      fill(list, ...orders.map((o) => orderRow(ctx, o, notice, refresh)));
      if (orders.length === 0) list.append(h('li', { class: 'muted', text: 'No open orders' }));
    });
  };
  live(ctx, 'orders', refresh);
  return panel('Open orders', notice.el, list);
}

export function positionsPanel(ctx: Ctx, marketId?: string): HTMLElement {
  const notice = new Notice();
  const list = h('ul', { class: 'positions', attrs: { 'aria-label': 'Positions' } });
  const refresh = async (): Promise<void> => {
    await notice.run(async () => {
      const page = await get<Page<Position>>('/positions/cursor', { limit: 200 });
      const held = page.data.filter(
        (p) => p.quantity > 0 && (marketId === undefined || p.market_id === marketId),
      );
      fill(
        list,
        ...held.map((p) =>
          h(
            'li',
            { class: 'position', attrs: { 'data-market-id': p.market_id } },
            h('div', {}, marketLink(ctx, p.market_id)),
            h('div', {
              text: `${p.quantity} ${p.side ?? ''} at ${p.average_price ?? '—'}¢ average · mark ${cents(p.mark_price)} · unrealized ${p.unrealized_pnl_cents === null ? '—' : dollars(p.unrealized_pnl_cents)} · realized ${dollars(p.realized_pnl_cents)}`,
            }),
          ),
        ),
      );
      if (held.length === 0) list.append(h('li', { class: 'muted', text: 'No position' }));
    });
  };
  live(ctx, 'positions', refresh);
  return panel(marketId === undefined ? 'Positions' : 'Your position', notice.el, list);
}

export function walletPanel(ctx: Ctx): HTMLElement {
  const notice = new Notice();
  const figures = h('dl', { class: 'wallet', attrs: { 'aria-label': 'Wallet' } });
  const txBody = h('tbody');
  const refresh = async (): Promise<void> => {
    await notice.run(async () => {
      const [w, tx] = await Promise.all([
        get<Wallet>('/wallet'),
        get<Page<Transaction>>('/transactions/cursor', { limit: 20 }),
      ]);
      fill(
        figures,
        h('dt', { text: 'Balance' }),
        h('dd', { text: dollars(w.balance_cents), attrs: { 'data-field': 'balance' } }),
        h('dt', { text: 'Reserved' }),
        h('dd', { text: dollars(w.reserved_cents) }),
        h('dt', { text: 'Available' }),
        h('dd', { text: dollars(w.available_cents), attrs: { 'data-field': 'available' } }),
      );
      fill(
        txBody,
        ...tx.data.map((t) =>
          h(
            'tr',
            {},
            h('td', { text: time(t.created_at) }),
            h('td', { text: t.type }),
            h('td', { text: dollars(t.amount_cents) }),
            h('td', { text: dollars(t.balance_after_cents) }),
          ),
        ),
      );
    });
  };
  live(ctx, 'wallet', refresh);
  return panel(
    'Wallet',
    notice.el,
    figures,
    h('h3', { text: 'Transactions' }),
    h(
      'table',
      { class: 'transactions', attrs: { 'aria-label': 'Transactions' } },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', { text: 'Time' }),
          h('th', { text: 'Type' }),
          h('th', { text: 'Amount' }),
          h('th', { text: 'Balance' }),
        ),
      ),
      txBody,
    ),
  );
}
