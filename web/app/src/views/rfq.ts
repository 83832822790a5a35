// Request for quote on a market page: ask for a price on a quantity (the paper house answers
// within a second), watch the quotes arrive live on the private `rfq` channel with their expiry
// counting down, accept one side of one (the trade lands in the position and wallet panels through
// their own channels), or cancel the RFQ. Quotes that end unaccepted stay listed, marked as such.
import { ApiError, del, get, post } from '../api.js';
import { type Ctx, Notice } from '../context.js';
import { button, field, fill, h, input, panel } from '../dom.js';
import type { AcceptedQuote, Market, Page, Rfq, RfqEvent, RfqQuote } from '../types.js';
import { describeOrder } from './ticket.js';

/** Ended quotes kept on screen per RFQ, and ended RFQs kept in the panel. */
const KEEP_ENDED = 3;

const ENDED_WORDS: Record<string, string> = {
  ACCEPTED: 'Accepted',
  REPLACED: 'Replaced by a newer quote',
  CANCELLED: 'Cancelled',
  EXPIRED: 'Expired',
};

interface Entry {
  rfq: Rfq;
  /** Newest first. */
  quotes: RfqQuote[];
  /** What the accept traded, in the requester's words. */
  traded?: string;
  /** An accept is on its way: the accept buttons are off. */
  accepting?: boolean;
}

/** "4:59", "28 s", or "expiring…" once the local clock passed it (the server's word follows). */
export function remaining(iso: string, now = Date.now()): string {
  const s = Math.ceil((Date.parse(iso) - now) / 1000);
  if (s <= 0) return 'expiring…';
  if (s < 60) return `${s} s`;
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

/** Idempotency-Key of one accept click: random, and valid outside a secure context too. */
function newKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `rfq-accept-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/** The four ways to take a quote; CONTRACT.md "RFQ": BUY YES / SELL NO at the ask, the rest at the bid. */
function takes(q: RfqQuote): { action: 'BUY' | 'SELL'; side: 'YES' | 'NO'; price: number }[] {
  const out: { action: 'BUY' | 'SELL'; side: 'YES' | 'NO'; price: number }[] = [];
  if (q.ask !== null) {
    out.push({ action: 'BUY', side: 'YES', price: q.ask });
    out.push({ action: 'SELL', side: 'NO', price: 100 - q.ask });
  }
  if (q.bid !== null) {
    out.push({ action: 'SELL', side: 'YES', price: q.bid });
    out.push({ action: 'BUY', side: 'NO', price: 100 - q.bid });
  }
  return out;
}

const cap = (w: string): string => w.charAt(0) + w.slice(1).toLowerCase();

export function rfqPanel(ctx: Ctx, market: Market): HTMLElement {
  const notice = new Notice();
  const entries = new Map<string, Entry>();
  const loading = new Set<string>();
  const list = h('div', { class: 'rfqs', attrs: { 'aria-label': 'Your RFQs' } });
  const quantity = input('rfq_quantity', {
    type: 'number',
    min: '1',
    max: '1000000',
    step: '1',
    inputmode: 'numeric',
    value: '10',
  });
  const submit = h('button', { text: 'Request quote', attrs: { type: 'submit' } });
  const form = h(
    'form',
    { class: 'row', attrs: { 'aria-label': 'Request a quote' } },
    field('Contracts to quote', quantity),
    submit,
  );

  /** Keeps a final status from an event: a slower read never turns it back to OPEN. */
  const mergeQuote = (e: Entry, q: RfqQuote): void => {
    const at = e.quotes.findIndex((x) => x.id === q.id);
    if (at < 0) e.quotes.unshift(q);
    else if (e.quotes[at].status === 'OPEN') e.quotes[at] = q;
  };
  const setRfq = (r: Rfq): Entry => {
    const e = entries.get(r.id);
    if (e === undefined) {
      const fresh: Entry = { rfq: r, quotes: [] };
      entries.set(r.id, fresh);
      return fresh;
    }
    if (e.rfq.status === 'OPEN') e.rfq = r;
    if (e.rfq.status !== 'OPEN') {
      // Its quotes ended with it (the server says so for the one accepted, if any).
      for (const q of e.quotes) if (q.status === 'OPEN') q.status = 'CANCELLED';
    }
    return e;
  };

  const quoteItem = (e: Entry, q: RfqQuote): HTMLElement => {
    const open = q.status === 'OPEN' && e.rfq.status === 'OPEN';
    const prices = [
      q.bid === null ? null : `Bid ${q.bid}¢`,
      q.ask === null ? null : `Ask ${q.ask}¢`,
    ].filter((s) => s !== null);
    return h(
      'li',
      {
        class: `quote${open ? '' : ' ended'}`,
        attrs: { 'data-quote-id': q.id, 'data-status': q.status },
      },
      h('div', {}, h('strong', { text: prices.join(' · ') }), ` for ${q.quantity} contracts`),
      open
        ? h(
            'div',
            { class: 'muted' },
            'Binding for ',
            h('span', { text: remaining(q.expires_at), attrs: { 'data-expires': q.expires_at } }),
          )
        : h('div', { class: 'muted', text: ENDED_WORDS[q.status] ?? cap(q.status) }),
      open
        ? h(
            'div',
            { class: 'row takes' },
            ...takes(q).map((t) => {
              const b = button(`${cap(t.action)} ${t.side} at ${t.price}¢`, () => {
                void accept(e, q, t.action, t.side);
              });
              b.disabled = e.accepting === true;
              return b;
            }),
          )
        : null,
    );
  };

  const rfqItem = (e: Entry): HTMLElement => {
    const r = e.rfq;
    const open = r.status === 'OPEN';
    const live = e.quotes.filter((q) => q.status === 'OPEN');
    const ended = e.quotes.filter((q) => q.status !== 'OPEN').slice(0, KEEP_ENDED);
    return h(
      'article',
      {
        class: 'rfq',
        attrs: {
          'data-rfq-id': r.id,
          'data-status': r.status,
          'aria-label': `RFQ for ${r.quantity} contracts`,
        },
      },
      h(
        'div',
        { class: 'row' },
        h('strong', { text: `${r.quantity} contracts` }),
        h('span', { class: 'tag', text: r.status }),
        open
          ? h(
              'span',
              { class: 'muted' },
              'expires in ',
              h('span', { text: remaining(r.expires_at), attrs: { 'data-expires': r.expires_at } }),
            )
          : null,
        open ? button('Cancel RFQ', () => cancel(e)) : null,
      ),
      e.traded !== undefined ? h('p', { class: 'traded', text: e.traded }) : null,
      h(
        'ul',
        { class: 'quotes', attrs: { 'aria-label': 'Quotes' } },
        ...live.map((q) => quoteItem(e, q)),
        ...ended.map((q) => quoteItem(e, q)),
        open && live.length === 0 ? h('li', { class: 'muted', text: 'Waiting for quotes…' }) : null,
      ),
    );
  };

  const draw = (): void => {
    const all = [...entries.values()].sort((a, b) =>
      b.rfq.created_at.localeCompare(a.rfq.created_at),
    );
    const shown = [
      ...all.filter((e) => e.rfq.status === 'OPEN'),
      ...all.filter((e) => e.rfq.status !== 'OPEN').slice(0, KEEP_ENDED),
    ];
    for (const e of all) if (!shown.includes(e)) entries.delete(e.rfq.id);
    fill(list, ...shown.map(rfqItem));
    if (shown.length === 0) list.append(h('p', { class: 'muted', text: 'No open RFQ here' }));
  };

  /** Reads an RFQ and its OPEN quotes (one the feed named before its creation was answered). */
  const load = async (id: string): Promise<void> => {
    if (loading.has(id)) return;
    loading.add(id);
    try {
      const [r, quotes] = await Promise.all([
        get<Rfq>(`/rfq/${id}`),
        get<Page<RfqQuote>>(`/rfq/${id}/quotes`, { limit: 200 }),
      ]);
      const e = setRfq(r);
      for (const q of quotes.data) mergeQuote(e, q);
    } finally {
      loading.delete(id);
    }
    draw();
  };

  /** Everything OPEN of this market, from the API: the first draw, and after a reconnect. */
  const refresh = async (): Promise<void> => {
    await notice.run(async () => {
      const page = await get<Page<Rfq>>('/rfq', { status: 'OPEN', limit: 200 });
      const open = page.data.filter((r) => r.market_id === market.id);
      await Promise.all(open.map((r) => load(r.id)));
      // Ones that ended while the feed was away.
      const gone = [...entries.values()].filter(
        (e) => e.rfq.status === 'OPEN' && !open.some((r) => r.id === e.rfq.id),
      );
      for (const e of gone) setRfq(await get<Rfq>(`/rfq/${e.rfq.id}`));
      draw();
    });
  };

  const onEvent = (m: RfqEvent): void => {
    switch (m.event) {
      case 'quote.received': {
        const e = entries.get(m.rfq_id);
        if (e === undefined) {
          if (m.market_id === market.id) void notice.quiet(() => load(m.rfq_id));
          return;
        }
        mergeQuote(e, m.quote);
        break;
      }
      case 'quote.cancelled': {
        const q = entries.get(m.rfq_id)?.quotes.find((x) => x.id === m.quote_id);
        if (q === undefined) return;
        q.status = m.status;
        break;
      }
      case 'quote.accepted': {
        const e = entries.get(m.rfq.id);
        if (e === undefined) return;
        const q = e.quotes.find((x) => x.id === m.quote.id);
        if (q !== undefined) q.status = m.quote.status;
        else e.quotes.unshift(m.quote);
        setRfq(m.rfq);
        break;
      }
      case 'rfq.expired':
        if (!entries.has(m.rfq.id)) return;
        setRfq(m.rfq);
        break;
      default:
        return; // rfq.created / rfq.closed: for responders
    }
    draw();
  };

  async function accept(
    e: Entry,
    q: RfqQuote,
    action: 'BUY' | 'SELL',
    side: 'YES' | 'NO',
  ): Promise<void> {
    e.accepting = true;
    draw();
    const headers = { 'idempotency-key': newKey() };
    const path = `/rfq/quotes/${q.id}/accept`;
    const body = { action, side };
    const r = await notice.run(
      async () => {
        try {
          return await post<AcceptedQuote>(path, body, headers);
        } catch (err) {
          // The connection dropped: the accept may have committed. The same key replays its
          // answer instead of trading twice or reporting QUOTE_NOT_OPEN.
          if (err instanceof ApiError && err.status === 0) {
            return post<AcceptedQuote>(path, body, headers);
          }
          throw err;
        }
      },
      (a) => `Accepted: ${describeOrder(a.order)}`,
    );
    e.accepting = false;
    if (r !== undefined) {
      e.traded = `Traded: ${describeOrder(r.order)}`;
      mergeQuote(e, r.quote);
      const mine = e.quotes.find((x) => x.id === r.quote.id);
      if (mine !== undefined) mine.status = r.quote.status;
      setRfq(r.rfq);
    }
    draw();
  }

  function cancel(e: Entry): void {
    void notice
      .run(
        () => del<Rfq>(`/rfq/${e.rfq.id}`),
        () => 'RFQ cancelled',
      )
      .then((r) => {
        if (r !== undefined) setRfq(r);
        draw();
      });
  }

  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    submit.disabled = true;
    void notice
      .run(
        () => post<Rfq>('/rfq', { market_id: market.id, quantity: Number(quantity.value) }),
        (r) => `Asked for a quote on ${r.quantity} contracts`,
      )
      .then((r) => {
        if (r !== undefined) setRfq(r);
        draw();
      })
      .finally(() => {
        submit.disabled = false;
      });
  });

  // The countdowns: one timer for the panel, gone with the view.
  const tick = window.setInterval(() => {
    for (const el of list.querySelectorAll<HTMLElement>('[data-expires]')) {
      el.textContent = remaining(el.dataset.expires!);
    }
  }, 1000);
  ctx.onLeave(() => window.clearInterval(tick));
  ctx.onLeave(ctx.rt.subscribe('rfq', (ev) => onEvent(ev.data as RfqEvent)));
  ctx.onResync(() => void refresh());
  void refresh();
  return panel('Request for quote', form, notice.el, list);
}
