import { expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { http } from '../support/harness.js';
import {
  account,
  closeClean,
  connected,
  describeInBrowser,
  hasCount,
  openMarket,
  shows,
  signedIn,
  signIn,
} from '../support/web-app.js';

/** The key the page holds for one of its worlds. */
async function worldKeyOf(page: Page, id: string): Promise<string> {
  const key = await page.evaluate<string | null>(
    `(JSON.parse(sessionStorage.getItem('svc-app.worlds') ?? '{}')[${JSON.stringify(id)}] ?? {}).key ?? null`,
  );
  expect(key).toMatch(/^svc_test_/);
  return key!;
}

// The demo app's world switcher in real Chromium: create an ephemeral world, move the tab into it
// (REST and the feed on the world's key, the header naming it), trade there only, come back to the
// shared paper world, delete it; no console error on the way.
describeInBrowser('/app in Chromium: the world switcher', (app) => {
  it('creates a world, switches to it, places an order seen only there, switches back and deletes it', async () => {
    const { w, page, key } = await signedIn(app, 'worlds');
    const asTab = { headers: { 'x-api-key': key } };
    const market = await openMarket(app.svc, key);
    const badge = page.getByLabel('Active world');
    await shows(badge, 'Shared paper world', true);

    // Create one (name, seed, lifetime): listed by the page and by the API.
    await page.getByRole('link', { name: 'Worlds' }).click();
    await page.getByLabel('World name').fill('ci');
    await page.getByLabel('Seed').fill('7');
    await page.getByLabel('Lifetime (s)').fill('600');
    await page.getByRole('button', { name: 'Create world' }).click();
    await shows(page.getByRole('region', { name: 'Your worlds' }), 'Created world ci (seed 7)');
    const listed = await http(`${app.svc.api}/sandbox/worlds`, asTab);
    expect(listed.body.data).toHaveLength(1);
    expect(listed.body.data[0]).toMatchObject({ name: 'ci', seed: 7 });
    const worldId = listed.body.data[0].id as string;
    expect(
      Date.parse(listed.body.data[0].expires_at) - Date.parse(listed.body.data[0].created_at),
    ).toBe(600_000);
    const row = page.locator(`.world[data-world-id="${worldId}"]`);
    await shows(row, 'seed 7');

    // Switch: the header names the world, the feed is live again on the world's key.
    await row.getByRole('button', { name: 'Switch to this world' }).click();
    await shows(badge, 'World ci', true);
    await connected(page);
    await shows(row.locator('.tag'), 'Active', true);
    const worldKey = await worldKeyOf(page, worldId);
    expect(worldKey).not.toBe(key);
    // Watchlists work inside a world too: the link stays.
    expect(await page.getByRole('link', { name: 'Watchlists' }).count()).toBe(1);

    // A resting order placed in the world (after a reload: the tab stays in the world).
    await page.goto(`${app.svc.baseUrl}/app/markets/${market.id}`);
    await connected(page);
    await shows(badge, 'World ci', true);
    await page.getByLabel('Type').selectOption('LIMIT');
    await page.getByLabel('Limit price (¢)').fill('20');
    await page.getByLabel('Quantity', { exact: true }).fill('3');
    await page.getByRole('button', { name: 'Place order' }).click();
    const open = page.locator('.orders .order');
    await hasCount(open, 1);
    await shows(open, 'BUY 3 YES at 20¢: OPEN');
    const orderId = (await open.getAttribute('data-order-id'))!;
    // Comments and RFQ work inside a world: the house quotes the world's RFQ around the world's
    // reference (moved here, in the world only), and the paper world has no such RFQ.
    await page.getByRole('list', { name: 'Comments' }).waitFor();
    const moved = await http(`${app.svc.api}/sandbox/markets/${market.id}/price`, {
      method: 'POST',
      headers: { 'x-api-key': worldKey },
      json: { price: 30 },
    });
    expect(moved.status).toBe(200);
    const rfqPanel = page.getByRole('region', { name: 'Request for quote' });
    await rfqPanel.getByLabel('Contracts to quote').fill('4');
    await rfqPanel.getByRole('button', { name: 'Request quote' }).click();
    await shows(rfqPanel.getByRole('status'), 'Asked for a quote on 4 contracts');
    const houseQuote = rfqPanel.locator('.quote[data-status="OPEN"]');
    await hasCount(houseQuote, 1);
    await shows(houseQuote, 'Bid 26¢ · Ask 34¢ for 4 contracts');
    const worldRfqs = await http(`${app.svc.api}/rfq?status=OPEN`, {
      headers: { 'x-api-key': worldKey },
    });
    expect(worldRfqs.body.data).toEqual([
      expect.objectContaining({ market_id: market.id, quantity: 4, status: 'OPEN' }),
    ]);
    expect((await http(`${app.svc.api}/rfq`, asTab)).body.data).toEqual([]);
    // In the world, not in the paper world.
    const inWorld = await http(`${app.svc.api}/orders/${orderId}`, {
      headers: { 'x-api-key': worldKey },
    });
    expect(inWorld.status).toBe(200);
    expect(inWorld.body).toMatchObject({ status: 'OPEN', price: 20, quantity: 3 });
    expect((await http(`${app.svc.api}/orders/${orderId}`, asTab)).status).toBe(404);

    // Back to the shared paper world: the order is not there.
    await page.getByRole('link', { name: 'Worlds' }).click();
    await page.getByRole('button', { name: 'Back to the shared paper world' }).click();
    await shows(badge, 'Shared paper world', true);
    await connected(page);
    await page.getByRole('link', { name: 'Portfolio' }).click();
    await shows(page.locator('.orders'), 'No open orders');
    expect(await page.locator('.orders .order').count()).toBe(0);

    // Delete it from the switcher: its key stops at once.
    await page.getByRole('link', { name: 'Worlds' }).click();
    await page
      .locator(`.world[data-world-id="${worldId}"]`)
      .getByRole('button', { name: 'Delete world' })
      .click();
    await shows(page.getByRole('list', { name: 'Your worlds' }), 'No worlds');
    expect((await http(`${app.svc.api}/sandbox/worlds`, asTab)).body.data).toEqual([]);
    const revoked = await http(`${app.svc.api}/wallet`, { headers: { 'x-api-key': worldKey } });
    expect(revoked.status).toBe(401);
    expect(revoked.body.error.code).toBe('API_KEY_REVOKED');
    await closeClean(w);
  });

  it('deleting the active world takes the tab back to the shared paper world', async () => {
    const email = await account(app.svc, 'worlds-active');
    const w = await app.browser.open(app.svc.baseUrl);
    const { page } = w;
    await signIn(page, app.svc.baseUrl, email);
    const badge = page.getByLabel('Active world');
    await page.getByRole('link', { name: 'Worlds' }).click();
    await page.getByLabel('World name').fill('scratch');
    await page.getByRole('button', { name: 'Create world' }).click();
    await page.getByRole('button', { name: 'Switch to this world' }).click();
    await shows(badge, 'World scratch', true);
    await connected(page);
    await page.getByRole('button', { name: 'Delete world' }).click();
    await shows(badge, 'Shared paper world', true);
    await connected(page);
    await shows(page.getByRole('list', { name: 'Your worlds' }), 'No worlds');
    expect(await page.evaluate<string | null>("sessionStorage.getItem('svc-app.world')")).toBe(
      null,
    );
    await closeClean(w);
  });
});
