// A market page: the live order book (orderbook: channel, snapshot then deltas), recent trades
// and the price chart (trades: channel), the order ticket, your orders and position here, the
// sandbox controls, and the panels of MARKET_PANELS (RFQ, watchlists, comments).
import { get } from '../api.js';
import { type Ctx, Notice } from '../context.js';
import { cents, fill, h, panel, time } from '../dom.js';
import type { Book, Level, Market, Page, Ticker, Trade } from '../types.js';
import { PriceChart } from './chart.js';
import { MARKET_PANELS } from './market-panels.js';
import { ordersPanel, positionsPanel } from './portfolio-panels.js';
import { sandboxPanel } from './sandbox.js';
import { ticketPanel } from './ticket.js';

const DEPTH = 8;

function bookTable(levels: Level[], label: string, cls: string): HTMLTableElement {
  return h(
    'table',
    { class: `book ${cls}`, attrs: { 'aria-label': label } },
    h('thead', {}, h('tr', {}, h('th', { text: 'Price (YES)' }), h('th', { text: 'Contracts' }))),
    h(
      'tbody',
      {},
      ...levels.map((l) =>
        h('tr', {}, h('td', { text: cents(l.price) }), h('td', { text: String(l.quantity) })),
      ),
    ),
  );
}

export async function marketView(ctx: Ctx, root: HTMLElement, id: string): Promise<void> {
  const notice = new Notice();
  fill(root, notice.el);
  let market: Market;
  try {
    market = await get<Market>(`/markets/${encodeURIComponent(id)}`);
  } catch (err) {
    if (!ctx.alive()) return;
    notice.error(err);
    fill(root, h('h1', { text: 'Market' }), notice.el);
    return;
  }
  if (!ctx.alive()) return;

  // Header: status and prices, live on ticker.
  const quote = h('p', { class: 'quote', attrs: { 'aria-label': 'Quote' } });
  const showQuote = (t: Ticker | Market): void => {
    fill(
      quote,
      h('span', { class: 'tag', text: t.status }),
      ' Bid ',
      h('strong', { text: cents(t.best_bid), attrs: { 'data-field': 'bid' } }),
      ' · Ask ',
      h('strong', { text: cents(t.best_ask), attrs: { 'data-field': 'ask' } }),
      ' · Last ',
      h('strong', { text: cents(t.last_price), attrs: { 'data-field': 'last' } }),
    );
  };
  showQuote(market);
  ctx.onLeave(
    ctx.rt.subscribe('ticker', (e) => {
      const t = e.data as Ticker;
      if (t.market_id === id) showQuote(t);
    }),
  );

  // Order book.
  const book = { bids: new Map<number, number>(), asks: new Map<number, number>() };
  const bookEl = h('div', { class: 'book-pair' });
  const drawBook = (): void => {
    const levels = (m: Map<number, number>): Level[] =>
      [...m.entries()].map(([price, quantity]) => ({ price, quantity }));
    const asks = levels(book.asks)
      .sort((a, b) => a.price - b.price)
      .slice(0, DEPTH)
      .reverse();
    const bids = levels(book.bids)
      .sort((a, b) => b.price - a.price)
      .slice(0, DEPTH);
    fill(bookEl, bookTable(asks, 'Asks', 'asks'), bookTable(bids, 'Bids', 'bids'));
  };
  const setBook = (b: Book): void => {
    book.bids = new Map(b.bids.map((l) => [l.price, l.quantity]));
    book.asks = new Map(b.asks.map((l) => [l.price, l.quantity]));
    drawBook();
  };
  ctx.onLeave(
    ctx.rt.subscribe(`orderbook:${id}`, (e) => {
      const d = e.data as
        | { kind: 'snapshot'; bids: Level[]; asks: Level[] }
        | { kind: 'delta'; side: 'bids' | 'asks'; price: number; quantity: number };
      if (d.kind === 'snapshot') return setBook(d);
      if (d.quantity === 0) book[d.side].delete(d.price);
      else book[d.side].set(d.price, d.quantity);
      drawBook();
    }),
  );

  // Trades and the chart.
  const tradesBody = h('tbody');
  const chartEl = h('div', {
    class: 'chart',
    attrs: { role: 'img', 'aria-label': 'Price chart (trade prices, YES cents)' },
  });
  const chart = new PriceChart(chartEl);
  ctx.onLeave(() => chart.remove());
  const tradeRow = (t: Trade): HTMLTableRowElement =>
    h(
      'tr',
      {},
      h('td', { text: time(t.created_at) }),
      h('td', { text: cents(t.price) }),
      h('td', { text: String(t.quantity) }),
      h('td', { text: t.taker_side }),
    );
  ctx.onLeave(
    ctx.rt.subscribe(`trades:${id}`, (e) => {
      const t = e.data as Trade;
      tradesBody.prepend(tradeRow(t));
      while (tradesBody.rows.length > 30) tradesBody.deleteRow(-1);
      chart.add(t);
    }),
  );

  const refresh = async (): Promise<void> => {
    await notice.run(async () => {
      const [m, b, trades] = await Promise.all([
        get<Market>(`/markets/${encodeURIComponent(id)}`),
        get<Book>(`/markets/${encodeURIComponent(id)}/orderbook`, { depth: DEPTH }),
        get<Page<Trade>>(`/markets/${encodeURIComponent(id)}/trades`, { limit: 200 }),
      ]);
      showQuote(m);
      setBook(b);
      fill(tradesBody, ...trades.data.slice(0, 30).map(tradeRow));
      chart.setTrades(trades.data);
    });
  };
  ctx.onResync(() => void refresh());

  const extra = MARKET_PANELS.map((make) => make(ctx, market));
  fill(
    root,
    h(
      'header',
      { class: 'market-head' },
      h('h1', { text: market.title }),
      h('p', { class: 'muted', text: market.description }),
      quote,
      notice.el,
    ),
    h(
      'div',
      { class: 'grid' },
      panel('Price chart', chartEl),
      panel('Order book', bookEl),
      ticketPanel(ctx, market),
      panel(
        'Recent trades',
        h(
          'table',
          { class: 'trades', attrs: { 'aria-label': 'Recent trades' } },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              h('th', { text: 'Time' }),
              h('th', { text: 'Price' }),
              h('th', { text: 'Qty' }),
              h('th', { text: 'Taker' }),
            ),
          ),
          tradesBody,
        ),
      ),
      ordersPanel(ctx, id),
      positionsPanel(ctx, id),
      sandboxPanel(ctx, market),
      ...extra,
    ),
  );
  await refresh();
}
