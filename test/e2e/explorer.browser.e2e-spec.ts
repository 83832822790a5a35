import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page, Request } from 'playwright-core';
import { createKey, login, TRADER } from '../support/access.js';
import {
  docsScreenshot,
  sharedBrowser,
  type BrowserHandle,
  type Watched,
} from '../support/browser.js';
import { http, startApp, type Running } from '../support/harness.js';

const STAGING = 'https://staging.explorer.example';

/** What the Explorer sent to the API: the key and the client mark of each request. */
interface Sent {
  url: string;
  method: string;
  apiKey: string | undefined;
  client: string | undefined;
}

function record(page: Page): Sent[] {
  const sent: Sent[] = [];
  page.on('request', (r: Request) => {
    if (!new URL(r.url()).pathname.startsWith('/api/')) return;
    const h = r.headers();
    sent.push({
      url: r.url(),
      method: r.method(),
      apiKey: h['x-api-key'],
      client: h['svc-client'],
    });
  });
  return sent;
}

/** The Explorer opened on one tag's operations (#/<Tag>; GET /wallet is under Wallet). */
async function openExplorer(
  browser: BrowserHandle,
  svc: Running,
  tag = 'Wallet',
): Promise<Watched & { sent: Sent[] }> {
  const watched = await browser.open(svc.baseUrl);
  const sent = record(watched.page);
  await watched.page.goto(`${svc.baseUrl}/explorer#/${tag}`);
  await watched.page.locator('.opblock').first().waitFor();
  return { ...watched, sent };
}

/** The Authorize dialog: the key typed into the ApiKeyAuth form, its Authorize pressed, closed. */
async function authorize(page: Page, key: string): Promise<void> {
  await page.locator('.auth-wrapper .btn.authorize').click();
  const form = page.locator('.modal-ux .auth-container', { hasText: 'ApiKeyAuth' });
  await form.locator('input').fill(key);
  await form.locator('button.authorize').click();
}

async function closeDialog(page: Page): Promise<void> {
  await page.locator('.modal-ux button.btn-done').first().click();
  await page.locator('.modal-ux').waitFor({ state: 'detached' });
}

/** Try it out -> Execute on GET /api/v1/wallet (opened and cleared as needed); the status shown. */
async function tryWallet(page: Page): Promise<string> {
  const op = page.locator('.opblock-get', {
    has: page.locator('.opblock-summary-path[data-path="/api/v1/wallet"]'),
  });
  const execute = op.locator('button.execute');
  if (!(await execute.isVisible())) {
    if (!(await op.locator('button.try-out__btn').isVisible())) {
      await op.locator('.opblock-summary').first().click();
    }
    await op.locator('button.try-out__btn').click();
  }
  const clear = op.locator('button.btn-clear');
  if (await clear.isVisible()) {
    await clear.click();
    await op.locator('.live-responses-table').waitFor({ state: 'detached' });
  }
  await execute.click();
  const status = op.locator('.live-responses-table .response .response-col_status').first();
  await status.waitFor();
  return (await status.innerText()).trim();
}

describe('the API Explorer in real Chromium', () => {
  let svc: Running;
  let browser: BrowserHandle;
  let testKey: string;
  let liveKey: string;
  beforeAll(async () => {
    svc = await startApp({ env: { STAGING_BASE_URL: STAGING } });
    const session = await login(svc, TRADER);
    testKey = (await createKey(svc, session, { name: 'explorer', environment: 'test' })).key;
    liveKey = (await createKey(svc, session, { name: 'live', environment: 'live' })).key;
    browser = await sharedBrowser();
  });
  afterAll(async () => {
    await svc?.close();
  });

  it('renders the served document: operations listed, this origin first among the servers', async () => {
    const { page, context, consoleErrors, foreignRequests } = await openExplorer(
      browser,
      svc,
      'Markets',
    );
    // Every tag of the document is offered, and the chosen one shows each of its operations.
    const doc = (await http(`${svc.api}/openapi.json`)).body as {
      tags: { name: string }[];
      paths: Record<string, Record<string, { tags?: string[] }>>;
    };
    const options = await page.locator('#explorer-tag option').allInnerTexts();
    expect(options).toEqual(expect.arrayContaining(doc.tags.map((t) => t.name)));
    const marketOps = Object.values(doc.paths).flatMap((item) =>
      Object.values(item).filter((op) => op.tags?.includes('Markets')),
    );
    expect(marketOps.length).toBeGreaterThan(5);
    await expect(page.locator('.opblock').count()).resolves.toBe(marketOps.length);
    await expect(
      page.locator('.opblock-summary-path[data-path="/api/v1/markets"]').count(),
    ).resolves.toBeGreaterThan(0);
    // Another tag from the picker: its operations replace these.
    await page.locator('#explorer-tag').selectOption('Wallet');
    await page.locator('.opblock-summary-path[data-path="/api/v1/wallet"]').first().waitFor();
    expect(page.url()).toContain('#/Wallet');
    const servers = await page.locator('.servers select option').allInnerTexts();
    expect(servers[0]).toContain(svc.baseUrl);
    expect(servers.some((s) => s.includes(STAGING))).toBe(true);
    await expect(page.locator('.explorer-header').innerText()).resolves.toContain('test keys only');
    await docsScreenshot(page, 'explorer.png');
    expect(consoleErrors).toEqual([]);
    expect(foreignRequests).toEqual([]);
    await context.close();
  });

  it('a try-it call with a test key authorized in the page succeeds, marked Svc-Client: api-explorer', async () => {
    const { page, context, consoleErrors, foreignRequests, sent } = await openExplorer(
      browser,
      svc,
    );
    await authorize(page, testKey);
    await expect(page.locator('.modal-ux').innerText()).resolves.toContain('Authorized');
    await closeDialog(page);
    expect(await tryWallet(page)).toBe('200');
    const body = await page
      .locator('.live-responses-table .response-col_description pre')
      .first()
      .innerText();
    expect(JSON.parse(body)).toHaveProperty('balance_cents');
    const wallet = sent.filter((s) => new URL(s.url).pathname === '/api/v1/wallet');
    expect(wallet).toEqual([
      {
        url: `${svc.baseUrl}/api/v1/wallet`,
        method: 'GET',
        apiKey: testKey,
        client: 'api-explorer',
      },
    ]);
    // Every request the page sent (the document included) carries the mark.
    expect(sent.length).toBeGreaterThanOrEqual(2);
    for (const s of sent) expect(s.client).toBe('api-explorer');
    expect(await page.locator('#explorer-refusal').isVisible()).toBe(false);
    expect(consoleErrors).toEqual([]);
    expect(foreignRequests).toEqual([]);
    await context.close();
  });

  it('a live key is refused in the page with a visible message, and never sent', async () => {
    const { page, context, consoleErrors, foreignRequests, sent } = await openExplorer(
      browser,
      svc,
    );
    await authorize(page, liveKey);
    const refusal = page.locator('#explorer-refusal');
    await refusal.waitFor({ state: 'visible' });
    expect(await refusal.innerText()).toContain('Live keys (svc_live_...) are refused here');
    // Not stored: the dialog still asks for a key.
    await expect(page.locator('.modal-ux').innerText()).resolves.not.toContain('Authorized');
    await closeDialog(page);
    // Nothing was stored for try-it to send.
    const authorized = await page.evaluate(() => {
      const ui = (
        globalThis as unknown as {
          ui: { authSelectors: { authorized(): { toJS(): Record<string, unknown> } } };
        }
      ).ui;
      return ui.authSelectors.authorized().toJS();
    });
    expect(authorized).toEqual({});
    // A key stored past the dialog (swagger-ui's preauthorizeApiKey, as a script might call it)
    // is stopped by the request interceptor: the call shows the refusal and nothing leaves.
    await page.evaluate((k) => {
      const ui = (
        globalThis as unknown as { ui: { preauthorizeApiKey(n: string, v: string): void } }
      ).ui;
      ui.preauthorizeApiKey('ApiKeyAuth', k);
    }, liveKey);
    const before = sent.length;
    await tryWallet(page);
    const shown = await page.locator('.live-responses-table').first().innerText();
    expect(shown).toContain('Live keys (svc_live_...) are refused here');
    expect(sent.length).toBe(before);
    expect(sent.filter((s) => s.apiKey !== undefined)).toEqual([]);
    expect(consoleErrors).toEqual([]);
    expect(foreignRequests).toEqual([]);
    await context.close();
  });
});
