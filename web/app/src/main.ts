// The demo web app's shell: sign-in, the header (navigation, connection state, sign out) and a
// history-API router over /app/... paths; views clean up their subscriptions when left.
import './styles.css';
import { describe } from './api.js';
import type { Ctx } from './context.js';
import { button, fill, h } from './dom.js';
import { type ConnectionState, Realtime } from './realtime.js';
import {
  activeWorld,
  currentKey,
  forgetWorld,
  restore,
  setActiveWorld,
  signOut,
} from './session.js';
import type { Me } from './types.js';
import { marketView } from './views/market.js';
import { marketsView } from './views/markets.js';
import { portfolioView } from './views/portfolio.js';
import { signInView } from './views/sign-in.js';
import { watchlistsView } from './views/watchlists.js';
import { worldsView } from './views/worlds.js';

const BASE = '/app';
const root = document.getElementById('root')!;

const STATE_WORDS: Record<ConnectionState, string> = {
  connecting: 'Connecting…',
  live: 'Live',
  reconnecting: 'Reconnecting…',
  closed: 'Offline',
};

function route(): string {
  const path = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : '/';
  return path === '' ? '/' : path;
}

function start(me: Me): void {
  const key = currentKey()!;
  const world = activeWorld();
  let leave: (() => void)[] = [];
  let current = true;
  const stop = (): void => {
    current = false;
    rt.stop();
    for (const fn of leave) fn();
  };
  // Another world: the feed reconnects with its key and every view is drawn again from it. Only
  // once per start (a deleted world's key closing the feed and the delete itself both ask).
  const switchWorld = (id: string | null): void => {
    if (!current) return;
    stop();
    setActiveWorld(id);
    start(me);
  };
  const rt = new Realtime(key, (reason) => {
    // A world's key stops when the world is deleted or expires: back to the paper world.
    if (world !== null) {
      forgetWorld(world.id);
      switchWorld(null);
      return;
    }
    signOut();
    showSignIn(`Signed out: ${reason}`);
  });
  const main = h('main', { attrs: { id: 'main' } });
  const conn = h('span', { class: 'conn', attrs: { role: 'status', 'aria-label': 'Connection' } });
  rt.onState((s) => {
    conn.textContent = STATE_WORDS[s];
    conn.dataset.state = s;
  });
  const navLink = (label: string, path: string): HTMLAnchorElement =>
    h('a', {
      text: label,
      attrs: { href: `${BASE}${path}` },
      on: {
        click: (e) => {
          e.preventDefault();
          navigate(path);
        },
      },
    });
  const header = h(
    'header',
    { class: 'top' },
    h('a', { class: 'brand', text: 'Sandbox exchange', attrs: { href: `${BASE}/` } }),
    h(
      'nav',
      { attrs: { 'aria-label': 'Main' } },
      navLink('Markets', '/'),
      navLink('Portfolio', '/portfolio'),
      navLink('Watchlists', '/watchlists'),
      navLink('Worlds', '/worlds'),
    ),
    h(
      'div',
      { class: 'who' },
      conn,
      h('span', {
        class: world === null ? 'world-badge' : 'world-badge in-world',
        text: world === null ? 'Shared paper world' : `World ${world.name ?? world.id}`,
        attrs: { 'aria-label': 'Active world', 'data-world': world?.id ?? 'paper' },
      }),
      h('span', { class: 'muted', text: `${me.user.email} · test` }),
      button('Sign out', () => {
        stop();
        signOut();
        showSignIn();
      }),
    ),
  );
  const footer = h(
    'footer',
    {},
    'Paper money on the test engine. Charts by ',
    h('a', {
      text: 'TradingView Lightweight Charts',
      attrs: { href: 'https://www.tradingview.com/', rel: 'noopener' },
    }),
    '.',
  );

  const render = (): void => {
    for (const fn of leave) fn();
    // This view's clean-ups: one registered after the view was left (a slow first fetch) runs
    // at once, so a late view neither subscribes nor draws over the next one.
    const mine: (() => void)[] = [];
    leave = mine;
    let alive = true;
    mine.push(() => {
      alive = false;
    });
    const onLeave = (fn: () => void): void => {
      if (alive) mine.push(fn);
      else fn();
    };
    const ctx: Ctx = {
      rt,
      me,
      world,
      switchWorld,
      navigate,
      alive: () => alive,
      onLeave,
      onResync: (fn) => onLeave(rt.onResync(fn)),
    };
    const path = route();
    const market = /^\/markets\/([^/]+)\/?$/.exec(path);
    window.scrollTo(0, 0);
    if (market !== null) void marketView(ctx, main, decodeURIComponent(market[1]));
    else if (path === '/portfolio') portfolioView(ctx, main);
    else if (path === '/watchlists') watchlistsView(ctx, main);
    else if (path === '/worlds') worldsView(ctx, main);
    else marketsView(ctx, main);
  };
  function navigate(path: string): void {
    history.pushState(null, '', `${BASE}${path}`);
    render();
  }
  window.onpopstate = render;
  fill(root, header, main, footer);
  rt.start();
  render();
}

function showSignIn(reason?: string): void {
  window.onpopstate = null;
  signInView(root, start, reason);
}

restore()
  .then((me) => (me === null ? showSignIn() : start(me)))
  .catch((err: unknown) => showSignIn(describe(err)));
