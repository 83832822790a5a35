// Watchlists: a page listing yours (create, delete, remove a market) and, on a market page, a
// control adding that market to one of them.
import { del, get, post } from '../api.js';
import { type Ctx, Notice } from '../context.js';
import { button, cents, field, fill, h, input, panel, select } from '../dom.js';
import type { Market, Page, Watchlist } from '../types.js';

const allLists = (): Promise<Page<Watchlist>> =>
  get<Page<Watchlist>>('/watchlists', { limit: 100 });

export function watchPanel(_ctx: Ctx, market: Market): HTMLElement {
  const notice = new Notice();
  const holder = h('div');
  const refresh = async (): Promise<void> => {
    const page = await notice.run(allLists);
    if (page === undefined) return;
    if (page.data.length === 0) {
      fill(
        holder,
        h('p', { class: 'muted', text: 'No watchlists yet: create one on the Watchlists page' }),
      );
      return;
    }
    const which = select(
      'watchlist',
      page.data.map((w) => [w.id, w.name]),
    );
    const form = h(
      'form',
      { class: 'row', attrs: { 'aria-label': 'Add to a watchlist' } },
      field('Watchlist', which),
      h('button', { text: 'Add to watchlist', attrs: { type: 'submit' } }),
    );
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const name = which.selectedOptions[0]?.textContent ?? '';
      void notice.run(
        () => post<Watchlist>(`/watchlists/${which.value}/markets`, { market_id: market.id }),
        () => `In ${name}`,
      );
    });
    fill(holder, form);
  };
  void refresh();
  return panel('Watch', holder, notice.el);
}

export function watchlistsView(ctx: Ctx, root: HTMLElement): void {
  const notice = new Notice();
  const lists = h('div', { class: 'watchlists' });
  const name = input('name', { maxlength: '64', required: '' });
  const create = h(
    'form',
    { class: 'row', attrs: { 'aria-label': 'Create a watchlist' } },
    field('Name', name),
    h('button', { text: 'Create watchlist', attrs: { type: 'submit' } }),
  );
  const refresh = async (): Promise<void> => {
    const page = await notice.run(allLists);
    if (page === undefined) return;
    fill(
      lists,
      ...page.data.map((w) =>
        h(
          'article',
          { class: 'watchlist', attrs: { 'aria-label': w.name } },
          h('h3', { text: w.name }),
          h(
            'ul',
            {},
            ...w.markets.map((m) =>
              h(
                'li',
                { class: 'row' },
                h('a', {
                  text: m.title,
                  attrs: { href: `/app/markets/${m.id}` },
                  on: {
                    click: (e) => {
                      e.preventDefault();
                      ctx.navigate(`/markets/${m.id}`);
                    },
                  },
                }),
                h('span', { class: 'muted', text: `${cents(m.best_bid)} / ${cents(m.best_ask)}` }),
                button('Remove', () => {
                  void notice.run(() => del(`/watchlists/${w.id}/markets/${m.id}`)).then(refresh);
                }),
              ),
            ),
          ),
          button(`Delete ${w.name}`, () => {
            void notice.run(() => del(`/watchlists/${w.id}`)).then(refresh);
          }),
        ),
      ),
    );
    if (page.data.length === 0) lists.append(h('p', { class: 'muted', text: 'No watchlists yet' }));
  };
  create.addEventListener('submit', (e) => {
    e.preventDefault();
    void notice
      .run(
        () => post<Watchlist>('/watchlists', { name: name.value }),
        (w) => {
          name.value = '';
          return `Created ${w.name}`;
        },
      )
      .then(refresh);
  });
  ctx.onResync(() => void refresh());
  fill(root, panel('Watchlists', create, notice.el, lists));
  void refresh();
}
