import { expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { http } from '../support/harness.js';
import { docsScreenshot } from '../support/browser.js';
import {
  account,
  closeClean,
  connected,
  describeInBrowser,
  hasCount,
  movePrice,
  openMarket,
  pageKey,
  shows,
  signedIn,
  signIn,
} from '../support/web-app.js';
import type { AdjustableClock } from '../../src/common/clock/clock.js';
import { WEB_APP_DIR } from '../../src/modules/web-app/web-app.static.js';

// The demo app in real Chromium against the real service: sign-in, live prices, trading, the
// sandbox controls, watchlists, request for quote; no console error and no request to another
// host on the way.
describeInBrowser('/app in Chromium: signing in and trading on the paper engine', (app) => {
  it('first render under 1.5 s, and the JavaScript of /app under 300 KB gzipped', async () => {
    const w = await app.browser.open(app.svc.baseUrl);
    const scripts: string[] = [];
    w.page.on('response', (r) => {
      if (r.request().resourceType() === 'script') scripts.push(new URL(r.url()).pathname);
    });
    await w.page.goto(`${app.svc.baseUrl}/app/`);
    await w.page.getByRole('button', { name: 'Sign in' }).waitFor();
    const fcp = await w.page.evaluate<number>(
      "performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1",
    );
    expect(fcp).toBeGreaterThan(0);
    expect(fcp).toBeLessThan(1500);
    // Every script the build made (what the page loads is among them), compressed as served.
    const built = readdirSync(`${WEB_APP_DIR}assets`).filter((f) => f.endsWith('.js'));
    expect(scripts.length).toBeGreaterThan(0);
    for (const s of scripts) expect(built).toContain(s.replace('/app/assets/', ''));
    const gz = built.reduce(
      (n, f) => n + gzipSync(readFileSync(`${WEB_APP_DIR}assets/${f}`)).length,
      0,
    );
    expect(gz).toBeLessThan(300 * 1024);
    await closeClean(w);
  });

  it('signs in with a session, mints one test key for the tab and reuses it after a reload', async () => {
    const email = await account(app.svc, 'keys');
    const w = await app.browser.open(app.svc.baseUrl);
    await signIn(w.page, app.svc.baseUrl, email);
    const key = await pageKey(w.page);
    const me = await http(`${app.svc.api}/auth/me`, { headers: { 'x-api-key': key } });
    expect(me.status).toBe(200);
    expect(me.body.user.email).toBe(email);
    expect(me.body.credential.environment).toBe('test');
    expect(me.body.credential.scopes).toEqual(
      expect.arrayContaining(['orders:write', 'websocket']),
    );
    await w.page.reload();
    await connected(w.page);
    expect(await pageKey(w.page)).toBe(key);
    const token = (
      await http(`${app.svc.api}/auth/login`, {
        method: 'POST',
        json: { email, password: 'correct-horse-battery' },
      })
    ).body.token as string;
    const keys = await http(`${app.svc.api}/api-keys`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(keys.body.data.map((k: { environment: string }) => k.environment)).toEqual(['test']);
    // A live key put in the tab's storage is never used: the page asks to sign in instead.
    await w.page.evaluate(
      "sessionStorage.setItem('svc-app.test-key', 'svc_live_0123456789abcdef0123456789abcdef')",
    );
    await w.page.reload();
    await w.page.getByRole('button', { name: 'Sign in' }).waitFor();
    // Signing out forgets the key.
    await signIn(w.page, app.svc.baseUrl, email);
    await w.page.getByRole('button', { name: 'Sign out' }).click();
    await w.page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await w.page.evaluate<string | null>("sessionStorage.getItem('svc-app.test-key')")).toBe(
      null,
    );
    await closeClean(w);
  });

  it('shows a price moving live, places, amends and cancels an order, and shows the position', async () => {
    const { w, page, key } = await signedIn(app, 'trade');
    const market = await openMarket(app.svc, key);

    // The markets list: the row's prices follow POST /sandbox/markets/{id}/price over the feed.
    const row = page.locator(`.market-row[data-market-id="${market.id}"]`);
    await row.waitFor();
    const moved = await movePrice(app.svc, key, market.id, 70);
    expect(moved.status).toBe(200);
    await shows(row.locator('[data-label="Bid"]'), `${moved.body.best_bid}¢`, true);
    expect(await row.locator('[data-label="Ask"]').textContent()).toBe(`${moved.body.best_ask}¢`);
    expect(moved.body.best_bid).not.toBe(null);

    // The market page: book, ticket, a marketable BUY that fills against the house.
    await row.getByRole('link', { name: market.title }).click();
    await page.getByRole('heading', { name: market.title }).waitFor();
    await page.getByRole('table', { name: 'Asks' }).locator('tbody tr').first().waitFor();
    await page.getByLabel('Type').selectOption('MARKET');
    await page.getByLabel('Quantity', { exact: true }).fill('7');
    await page.getByRole('button', { name: 'Place order' }).click();
    const ticket = page.getByRole('form', { name: 'Order ticket' });
    await shows(ticket.getByRole('status'), 'BUY 7 YES at market: FILLED');
    const position = page.locator(`.positions .position[data-market-id="${market.id}"]`);
    await shows(position, '7 YES');
    await page.getByRole('table', { name: 'Recent trades' }).locator('tbody tr').first().waitFor();
    expect(await page.locator('.chart canvas').count()).toBeGreaterThan(0);
    // SELL at market: the position shrinks.
    await page.getByLabel('Action').selectOption('SELL');
    await page.getByLabel('Quantity', { exact: true }).fill('2');
    await page.getByRole('button', { name: 'Place order' }).click();
    await shows(ticket.getByRole('status'), 'SELL 2 YES at market: FILLED');
    await shows(position, '5 YES');
    await page.getByLabel('Action').selectOption('BUY');
    await docsScreenshot(page, 'app.png');

    // A resting LIMIT order: listed, amended, cancelled.
    await page.getByLabel('Type').selectOption('LIMIT');
    await page.getByLabel('Limit price (¢)').fill('20');
    await page.getByLabel('Quantity', { exact: true }).fill('3');
    await page.getByRole('button', { name: 'Place order' }).click();
    const open = page.locator('.orders .order');
    await hasCount(open, 1);
    await shows(open, 'BUY 3 YES at 20¢: OPEN');
    const orderId = (await open.getAttribute('data-order-id'))!;
    await open.getByLabel('New price (¢)').fill('21');
    await open.getByRole('button', { name: 'Amend' }).click();
    await shows(open, 'BUY 3 YES at 21¢: OPEN');
    await open.getByRole('button', { name: 'Cancel order' }).click();
    await shows(page.locator('.orders'), 'No open orders');
    const cancelled = await http(`${app.svc.api}/orders/${orderId}`, {
      headers: { 'x-api-key': key },
    });
    expect(cancelled.body).toMatchObject({ status: 'CANCELLED', price: 21, cancel_reason: 'USER' });

    // The portfolio: the position and the wallet after the fill.
    await page.getByRole('link', { name: 'Portfolio' }).click();
    await shows(page.locator(`.positions .position[data-market-id="${market.id}"]`), '5 YES');
    const wallet = await http(`${app.svc.api}/wallet`, { headers: { 'x-api-key': key } });
    const dollars = (wallet.body.balance_cents / 100).toLocaleString('en-US', {
      minimumFractionDigits: 2,
    });
    await shows(page.locator('[data-field="balance"]'), `$${dollars}`, true);
    await shows(page.getByRole('table', { name: 'Transactions' }), 'TRADE');
    await closeClean(w);
  });

  it('the sandbox controls fund, move the price, resolve and reset; watchlists collect markets', async () => {
    const { w, page, key } = await signedIn(app, 'sandbox');
    const market = await openMarket(app.svc, key, 1);

    await page.getByRole('link', { name: 'Portfolio' }).click();
    await shows(page.locator('[data-field="balance"]'), '$10,000.00', true);
    await page.getByLabel('Amount ($)').fill('250');
    await page.getByRole('button', { name: 'Add paper money' }).click();
    await shows(page.locator('[data-field="balance"]'), '$10,250.00', true);

    await page.getByRole('link', { name: 'Watchlists' }).click();
    await page.getByLabel('Name').fill('Elections');
    await page.getByRole('button', { name: 'Create watchlist' }).click();
    await page.getByRole('heading', { name: 'Elections' }).waitFor();

    await page.goto(`${app.svc.baseUrl}/app/markets/${market.id}`); // a deep link
    await connected(page);
    await page.getByRole('button', { name: 'Add to watchlist' }).click();
    await shows(page.getByRole('region', { name: 'Watch' }), 'In Elections');
    await page.getByLabel('Reference price (¢)').fill('30');
    await page.getByRole('button', { name: 'Move price' }).click();
    const quote = page.getByLabel('Quote');
    const after = await http(`${app.svc.api}/markets/${market.id}`, {
      headers: { 'x-api-key': key },
    });
    expect(after.body.best_ask).toBeLessThan(35);
    await shows(quote.locator('[data-field="ask"]'), `${after.body.best_ask}¢`, true);
    await page.getByLabel('Type').selectOption('MARKET');
    await page.getByLabel('Quantity', { exact: true }).fill('4');
    await page.getByRole('button', { name: 'Place order' }).click();
    await shows(page.locator('.positions .position'), '4 YES');
    await page.getByRole('button', { name: 'Resolve YES' }).click();
    const sandbox = page.getByRole('region', { name: 'Sandbox controls' });
    await shows(sandbox, 'Resolved YES; your payout $4.00');
    await shows(quote, 'RESOLVED');

    await page.getByRole('link', { name: 'Watchlists' }).click();
    await shows(page.getByRole('article', { name: 'Elections' }), market.title);

    await page.getByRole('link', { name: 'Portfolio' }).click();
    await page.getByRole('button', { name: 'Reset paper account' }).click();
    await shows(page.getByRole('region', { name: 'Sandbox controls' }), 'Paper account reset');
    await shows(page.locator('[data-field="balance"]'), '$10,000.00', true);
    await closeClean(w);
  });
  it('requests a quote, shows the house quotes live (replaced and expired ones as such), refuses in words, accepts one and cancels an RFQ', async () => {
    const email = await account(app.svc, 'rfq');
    const w = await app.browser.open(app.svc.baseUrl);
    const { page } = w;
    const accepts: (string | undefined)[] = [];
    page.on('request', (r) => {
      if (/\/rfq\/quotes\/[^/]+\/accept$/.test(r.url()))
        accepts.push(r.headers()['idempotency-key']);
    });
    await signIn(page, app.svc.baseUrl, email);
    const key = await pageKey(page);
    const market = await openMarket(app.svc, key, 2);
    await movePrice(app.svc, key, market.id, 50);
    await page.goto(`${app.svc.baseUrl}/app/markets/${market.id}`);
    await connected(page);
    const panel = page.getByRole('region', { name: 'Request for quote' });
    const asKey = { headers: { 'x-api-key': key } };
    const openQuote = panel.locator('.quote[data-status="OPEN"]');

    // Too big for the paper balance: the house quotes it, the accept is refused in the API's words.
    await panel.getByLabel('Contracts to quote').fill('100000');
    await panel.getByRole('button', { name: 'Request quote' }).click();
    await shows(panel.getByRole('status'), 'Asked for a quote on 100000 contracts');
    await hasCount(openQuote, 1);
    const big = await http(`${app.svc.api}/rfq?status=OPEN`, asKey);
    expect(big.body.data).toHaveLength(1);
    const bigQuote = (await http(`${app.svc.api}/rfq/${big.body.data[0].id}/quotes`, asKey)).body
      .data[0];
    expect(bigQuote).toMatchObject({ bid: 46, ask: 54, quantity: 100000 });
    await shows(openQuote, 'Bid 46¢ · Ask 54¢ for 100000 contracts');
    await shows(openQuote, /Binding for (2\d|30) s/);
    const refused = await http(`${app.svc.api}/rfq/quotes/${bigQuote.id}/accept`, {
      method: 'POST',
      headers: { 'x-api-key': key },
      json: { action: 'BUY', side: 'YES' },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('INSUFFICIENT_FUNDS');
    await openQuote.getByRole('button', { name: 'Buy YES at 54¢' }).click();
    await shows(panel.getByRole('alert'), refused.body.error.message, true);
    // Cancelled from the panel: the RFQ and its quote end, on the server too.
    await panel.getByRole('button', { name: 'Cancel RFQ' }).click();
    await shows(panel.getByRole('status'), 'RFQ cancelled');
    const bigRfq = panel.locator(`.rfq[data-rfq-id="${big.body.data[0].id}"]`);
    await shows(bigRfq.locator('.tag'), 'CANCELLED', true);
    await shows(bigRfq.locator('.quote'), 'Cancelled');
    expect((await http(`${app.svc.api}/rfq/${big.body.data[0].id}`, asKey)).body.status).toBe(
      'CANCELLED',
    );

    // Ten contracts: the house quote arrives; the reference moves, and the house replaces it.
    await panel.getByLabel('Contracts to quote').fill('10');
    await panel.getByRole('button', { name: 'Request quote' }).click();
    await hasCount(openQuote, 1);
    await shows(openQuote, 'Bid 46¢ · Ask 54¢ for 10 contracts');
    const first = (await openQuote.getAttribute('data-quote-id'))!;
    await movePrice(app.svc, key, market.id, 60);
    await shows(openQuote, 'Bid 56¢ · Ask 64¢ for 10 contracts');
    await shows(panel.locator(`.quote[data-quote-id="${first}"]`), 'Replaced by a newer quote');
    expect(await panel.locator(`.quote[data-quote-id="${first}"] button`).count()).toBe(0);

    // Accepted: BUY YES at the ask, off the book; the position and the wallet follow.
    const before = (await http(`${app.svc.api}/wallet`, asKey)).body.balance_cents as number;
    await openQuote.getByRole('button', { name: 'Buy YES at 64¢' }).click();
    await shows(panel.getByRole('status'), 'Accepted: BUY 10 YES at 64¢: FILLED', true);
    await shows(panel.locator('.traded'), 'Traded: BUY 10 YES at 64¢: FILLED');
    await shows(panel.locator('.quote[data-status="ACCEPTED"]'), 'Accepted');
    await shows(page.locator(`.positions .position[data-market-id="${market.id}"]`), '10 YES');
    const orders = await http(`${app.svc.api}/orders?market_id=${market.id}`, asKey);
    expect(orders.body.data).toEqual([
      expect.objectContaining({ type: 'RFQ', status: 'FILLED', price: 64, quantity: 10 }),
    ]);
    const wallet = await http(`${app.svc.api}/wallet`, asKey);
    expect(wallet.body.balance_cents).toBe(before - 640);
    expect(accepts).toHaveLength(2);
    for (const k of accepts) expect(k).toMatch(/^rfq-accept-[0-9a-f]{32}$/);
    expect(accepts[0]).not.toBe(accepts[1]);

    // Left to lapse on the service clock: the quote, then the RFQ, shown expired.
    await panel.getByLabel('Contracts to quote').fill('5');
    await panel.getByRole('button', { name: 'Request quote' }).click();
    await hasCount(openQuote, 1);
    const lapsing = panel.locator('.rfq[data-status="OPEN"]');
    const lapsingId = (await lapsing.getAttribute('data-rfq-id'))!;
    (app.svc.clock as AdjustableClock).advance(301_000);
    const lapsed = panel.locator(`.rfq[data-rfq-id="${lapsingId}"]`);
    await shows(lapsed.locator('.tag'), 'EXPIRED', true);
    await shows(lapsed.locator('.quote .muted'), 'Expired', true);
    await hasCount(openQuote, 0);

    await page.getByRole('link', { name: 'Portfolio' }).click();
    const dollars = (wallet.body.balance_cents / 100).toLocaleString('en-US', {
      minimumFractionDigits: 2,
    });
    await shows(page.locator('[data-field="balance"]'), `$${dollars}`, true);
    // The browser reports the refused accept itself; nothing else went wrong.
    expect(w.consoleErrors).toEqual([
      expect.stringMatching(/Failed to load resource: the server responded with a status of 422/),
    ]);
    w.consoleErrors.length = 0;
    await closeClean(w);
  });
});
