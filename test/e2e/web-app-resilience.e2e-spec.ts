import { expect, it } from '@jest/globals';
import type { Socket } from 'node:net';
import { http } from '../support/harness.js';
import { docsScreenshot } from '../support/browser.js';
import {
  account,
  closeClean,
  connected,
  describeInBrowser,
  expectNoHorizontalOverflow,
  movePrice,
  openMarket,
  pageKey,
  PASSWORD,
  shows,
  signedIn,
  signIn,
} from '../support/web-app.js';

/** The service's WebSocket sockets, so a test can drop them as a network failure would. */
const upgraded: Socket[] = [];

// The demo app when things go wrong or get small: a dropped feed, an API refusal, hostile text
// in a comment, a phone-sized screen.
describeInBrowser(
  '/app in Chromium: drops, errors, hostile text and a phone screen',
  (app) => {
    it('reconnects the WebSocket after a drop and re-fetches what it missed', async () => {
      const { w, page, key } = await signedIn(app, 'drop');
      const market = await openMarket(app.svc, key);
      const row = page.locator(`.market-row[data-market-id="${market.id}"]`);
      await row.waitFor();
      const before = await row.locator('[data-label="Bid"]').textContent();

      // The connection dies; while the page is away, the price moves: no event can tell it.
      const sockets = upgraded.splice(0);
      expect(sockets.length).toBeGreaterThan(0);
      for (const s of sockets) s.destroy();
      const moved = await movePrice(app.svc, key, market.id, 25);
      expect(moved.status).toBe(200);
      expect(`${moved.body.best_bid}¢`).not.toBe(before);
      await page.locator('.conn[data-state="reconnecting"]').waitFor();
      await shows(page.getByRole('status', { name: 'Connection' }), 'Reconnecting…');

      // Back: a new connection (the page's own reconnect), and the list re-fetched.
      await connected(page);
      expect(upgraded.length).toBe(1);
      await shows(row.locator('[data-label="Bid"]'), `${moved.body.best_bid}¢`, true);
      await shows(row.locator('[data-label="Ask"]'), `${moved.body.best_ask}¢`, true);
      // And live again: the next move arrives over the new connection.
      const again = await movePrice(app.svc, key, market.id, 60);
      await shows(row.locator('[data-label="Bid"]'), `${again.body.best_bid}¢`, true);
      await closeClean(w);
    });

    it('signs the tab out, saying why, when its key is revoked while connected', async () => {
      const { w, page, key, email } = await signedIn(app, 'revoked');
      const me = await http(`${app.svc.api}/auth/me`, { headers: { 'x-api-key': key } });
      const login = await http(`${app.svc.api}/auth/login`, {
        method: 'POST',
        json: { email, password: PASSWORD },
      });
      const revoked = await http(`${app.svc.api}/api-keys/${me.body.credential.key_id}/revoke`, {
        method: 'POST',
        headers: { authorization: `Bearer ${login.body.token}` },
      });
      expect(revoked.status).toBe(200);
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      await shows(page.getByRole('form', { name: 'Sign in' }).getByRole('status'), /^Signed out: /);
      expect(await page.evaluate<string | null>("sessionStorage.getItem('svc-app.test-key')")).toBe(
        null,
      );
      expect(w.consoleErrors).toEqual([]);
      await w.context.close();
    });

    it("shows the API's refusals in words: an order over the balance, an unknown market", async () => {
      const { w, page, key } = await signedIn(app, 'broke');
      const market = await openMarket(app.svc, key);
      await page.goto(`${app.svc.baseUrl}/app/markets/${market.id}`);
      await connected(page);
      // 90 cents x 50,000 contracts is $45,000, over the $10,000 paper balance.
      const order = {
        market_id: market.id,
        action: 'BUY',
        side: 'YES',
        type: 'LIMIT',
        price: 90,
        quantity: 50_000,
      };
      const direct = await http(`${app.svc.api}/orders`, {
        method: 'POST',
        headers: { 'x-api-key': key },
        json: order,
      });
      expect(direct.status).toBe(422);
      await page.getByLabel('Limit price (¢)').fill('90');
      await page.getByLabel('Quantity', { exact: true }).fill('50000');
      await page.getByRole('button', { name: 'Place order' }).click();
      const ticket = page.getByRole('form', { name: 'Order ticket' });
      await shows(ticket.getByRole('alert'), direct.body.error.message, true);
      // Nothing was placed.
      const orders = await http(`${app.svc.api}/orders`, { headers: { 'x-api-key': key } });
      expect(orders.body.data).toEqual([]);
      // A deep link to a market that does not exist: the 404 in words.
      const unknown = await http(`${app.svc.api}/markets/mkt_nosuchmarket`, {
        headers: { 'x-api-key': key },
      });
      expect(unknown.status).toBe(404);
      await page.goto(`${app.svc.baseUrl}/app/markets/mkt_nosuchmarket`);
      await shows(page.getByRole('alert'), unknown.body.error.message, true);
      // The browser reports the refused requests itself; nothing else went wrong.
      expect(w.consoleErrors).toEqual([
        expect.stringMatching(/Failed to load resource: the server responded with a status of 422/),
        expect.stringMatching(/Failed to load resource: the server responded with a status of 404/),
      ]);
      expect(w.foreignRequests).toEqual([]);
      await w.context.close();
    });

    it('renders comments as text: markup in a comment is shown as typed, never run', async () => {
      const { w, page, key } = await signedIn(app, 'xss');
      const market = await openMarket(app.svc, key);
      const hostile = '<img src=x onerror="document.title=\'pwned\'"><b>bold</b>';
      const posted = await http(`${app.svc.api}/markets/${market.id}/comments`, {
        method: 'POST',
        headers: { 'x-api-key': key },
        json: { body: hostile },
      });
      expect(posted.status).toBe(201);
      await page.goto(`${app.svc.baseUrl}/app/markets/${market.id}`);
      await connected(page);
      const comments = page.getByRole('list', { name: 'Comments' });
      await shows(comments, hostile);
      // Posted through the form, too.
      const script = '<script>document.title="pwned"</script> and <svg onload=alert(1)>';
      await page.getByLabel('Your comment').fill(script);
      await page.getByRole('button', { name: 'Post comment' }).click();
      await shows(comments, script);
      const bodies = await comments.locator('.comment-body').allTextContents();
      expect(bodies).toEqual([script, hostile]);
      expect(await comments.locator('img, b, script, svg').count()).toBe(0);
      expect(await page.title()).not.toBe('pwned');
      await closeClean(w);
    });

    it('fits a phone (375x667): markets, a market page with an RFQ, the portfolio and watchlists without sideways scrolling', async () => {
      const email = await account(app.svc, 'phone');
      const w = await app.browser.open(app.svc.baseUrl, { width: 375, height: 667 });
      const { page } = w;
      await page.goto(`${app.svc.baseUrl}/app/`);
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      await expectNoHorizontalOverflow(page);
      await signIn(page, app.svc.baseUrl, email);
      const key = await pageKey(page);
      const market = await openMarket(app.svc, key);
      await page.locator('.market-row[data-market-id]').first().waitFor();
      await expectNoHorizontalOverflow(page);

      await page.getByRole('link', { name: market.title }).click();
      await page.getByRole('table', { name: 'Bids' }).locator('tbody tr').first().waitFor();
      await page.getByLabel('Side').selectOption('NO');
      await page.getByLabel('Type').selectOption('MARKET');
      await page.getByLabel('Quantity', { exact: true }).fill('2');
      await page.getByRole('button', { name: 'Place order' }).click();
      await shows(page.getByRole('form', { name: 'Order ticket' }), 'BUY 2 NO at market: FILLED');
      await shows(page.locator('.positions .position'), '2 NO');
      await expectNoHorizontalOverflow(page);
      // The RFQ panel with a live quote and its four accept buttons.
      const rfq = page.getByRole('region', { name: 'Request for quote' });
      await rfq.getByLabel('Contracts to quote').fill('3');
      await rfq.getByRole('button', { name: 'Request quote' }).click();
      await rfq.locator('.quote[data-status="OPEN"]').getByRole('button').nth(3).waitFor();
      await expectNoHorizontalOverflow(page);
      await page.evaluate('window.scrollTo(0, 0)');
      await docsScreenshot(page, 'app-phone.png');

      await page.getByRole('link', { name: 'Portfolio' }).click();
      await shows(page.getByRole('table', { name: 'Transactions' }), 'TRADE');
      await expectNoHorizontalOverflow(page);
      await page.getByRole('link', { name: 'Watchlists' }).click();
      await page.getByRole('button', { name: 'Create watchlist' }).waitFor();
      await expectNoHorizontalOverflow(page);
      await closeClean(w);
    });
  },
  (svc) =>
    svc.app.getHttpServer().on('upgrade', (_req: unknown, socket: Socket) => upgraded.push(socket)),
);
