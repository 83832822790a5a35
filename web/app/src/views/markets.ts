// The markets list: the paper engine's markets with bid, ask and last moving live on `ticker`.
import { get } from '../api.js';
import { type Ctx, Notice } from '../context.js';
import { cents, field, fill, h, select } from '../dom.js';
import type { Market, Page, Ticker } from '../types.js';

interface Row {
  el: HTMLElement;
  bid: HTMLElement;
  ask: HTMLElement;
  last: HTMLElement;
  status: HTMLElement;
}

function priceCell(label: string): HTMLElement {
  return h('span', { class: 'num', attrs: { 'data-label': label } });
}

function setPrice(el: HTMLElement, value: number | null): void {
  const text = cents(value);
  if (el.textContent === text) return;
  const moved = el.textContent !== '';
  el.textContent = text;
  if (moved) {
    el.classList.remove('flash');
    void el.offsetWidth; // restart the animation
    el.classList.add('flash');
  }
}

export function marketsView(ctx: Ctx, root: HTMLElement): void {
  const notice = new Notice();
  const rows = new Map<string, Row>();
  const list = h('ul', { class: 'markets', attrs: { 'aria-label': 'Markets' } });
  const statusFilter = select(
    'status',
    [
      ['OPEN', 'Open'],
      ['', 'All'],
      ['CLOSED', 'Closed'],
      ['RESOLVED', 'Resolved'],
    ],
    'OPEN',
  );
  statusFilter.addEventListener('change', () => void load());

  const apply = (t: Ticker | Market, id: string): void => {
    const row = rows.get(id);
    if (row === undefined) return;
    setPrice(row.bid, t.best_bid);
    setPrice(row.ask, t.best_ask);
    setPrice(row.last, t.last_price);
    row.status.textContent = t.status;
  };

  async function load(): Promise<void> {
    const page = await notice.run(() =>
      get<Page<Market>>('/markets', { limit: 200, status: statusFilter.value || undefined }),
    );
    if (page === undefined) return;
    rows.clear();
    fill(
      list,
      h(
        'li',
        { class: 'market-row head', attrs: { 'aria-hidden': 'true' } },
        h('span', { text: 'Market' }),
        h('span', { text: 'Bid' }),
        h('span', { text: 'Ask' }),
        h('span', { text: 'Last' }),
      ),
    );
    for (const m of page.data) {
      const row: Row = {
        el: h('li', { class: 'market-row', attrs: { 'data-market-id': m.id } }),
        bid: priceCell('Bid'),
        ask: priceCell('Ask'),
        last: priceCell('Last'),
        status: h('span', { class: 'tag' }),
      };
      const link = h('a', {
        text: m.title,
        attrs: { href: `/app/markets/${m.id}` },
        on: {
          click: (e) => {
            e.preventDefault();
            ctx.navigate(`/markets/${m.id}`);
          },
        },
      });
      row.el.append(
        h(
          'span',
          { class: 'title' },
          link,
          ' ',
          h('span', { class: 'tag', text: m.category }),
          ' ',
          row.status,
        ),
        row.bid,
        row.ask,
        row.last,
      );
      rows.set(m.id, row);
      apply(m, m.id);
      list.append(row.el);
    }
  }

  ctx.onLeave(
    ctx.rt.subscribe('ticker', (e) => apply(e.data as Ticker, (e.data as Ticker).market_id)),
  );
  ctx.onResync(() => void load());
  fill(
    root,
    h(
      'section',
      { class: 'panel wide', attrs: { 'aria-labelledby': 'markets-title' } },
      h(
        'div',
        { class: 'panel-head' },
        h('h1', { text: 'Markets', attrs: { id: 'markets-title' } }),
        field('Status', statusFilter),
      ),
      notice.el,
      list,
    ),
  );
  void load();
}
