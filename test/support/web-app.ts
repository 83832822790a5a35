// The demo web app (/app) in real Chromium: boot the service with the paper feed still (prices
// move only when a test moves them), sign in through the page, and read what the page holds.
import { afterAll, beforeAll, describe, expect } from '@jest/globals';
import type { Locator, Page } from 'playwright-core';
import { AdjustableClock } from '../../src/common/clock/clock.js';
import { verifiedAccount } from './access.js';
import { sharedBrowser, type BrowserHandle, type Watched } from './browser.js';
import { http, startApp, type Running } from './harness.js';

export const PASSWORD = 'correct-horse-battery';

/** Wall clock (the browser's timers are real), no price feed, no rate limits on the shared IP. */
export function startWebApp(): Promise<Running> {
  return startApp({
    clock: new AdjustableClock(),
    env: { SANDBOX_FEED_INTERVAL_MS: '0', RATE_LIMITS_ENABLED: 'false' },
  });
}

/** The running service and Chromium of a {@link describeInBrowser} suite (set once it started). */
export interface InBrowser {
  readonly svc: Running;
  readonly browser: BrowserHandle;
}

/**
 * A suite of /app tests in Chromium: the service ({@link startWebApp}) starts before its tests
 * and closes after them; the browser is the test file's shared one ({@link sharedBrowser}).
 * `started` runs on the service before the browser is asked for (to watch its sockets, say).
 */
export function describeInBrowser(
  title: string,
  tests: (app: InBrowser) => void,
  started?: (svc: Running) => void,
): void {
  describe(title, () => {
    let svc: Running | undefined;
    let browser: BrowserHandle | undefined;
    beforeAll(async () => {
      svc = await startWebApp();
      started?.(svc);
      browser = await sharedBrowser();
    });
    afterAll(async () => {
      await svc?.close();
    });
    tests({
      get svc() {
        return svc!;
      },
      get browser() {
        return browser!;
      },
    });
  });
}

/** A fresh verified account, so each test's paper account starts at the starting balance. */
export async function account(svc: Running, name: string): Promise<string> {
  const email = `${name}-${Date.now()}@example.com`;
  await verifiedAccount(svc, email);
  return email;
}

/** Signs in through the form and waits for the live feed. */
export async function signIn(page: Page, origin: string, email: string): Promise<void> {
  await page.goto(`${origin}/app/`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await connected(page);
}

/**
 * A fresh account signed in on a new watched page (`viewport`: a phone's, say): the page, and the
 * test key it minted for its tab.
 */
export async function signedIn(
  app: InBrowser,
  name: string,
  viewport?: { width: number; height: number },
): Promise<{ w: Watched; page: Page; key: string; email: string }> {
  const email = await account(app.svc, name);
  const w = await app.browser.open(app.svc.baseUrl, viewport);
  await signIn(w.page, app.svc.baseUrl, email);
  return { w, page: w.page, key: await pageKey(w.page), email };
}

export async function connected(page: Page): Promise<void> {
  await page.locator('.conn[data-state="live"]').waitFor();
}

/** The test key the page minted for its tab. */
export async function pageKey(page: Page): Promise<string> {
  const key = await page.evaluate<string | null>("sessionStorage.getItem('svc-app.test-key')");
  expect(key).toMatch(/^svc_test_/);
  return key!;
}

/** An OPEN paper market whose house ladder has room to move: the first politics one. */
export async function openMarket(
  svc: Running,
  key: string,
  skip = 0,
): Promise<{ id: string; title: string }> {
  const res = await http(`${svc.api}/markets?status=OPEN&category=POLITICS&limit=50`, {
    headers: { 'x-api-key': key },
  });
  expect(res.status).toBe(200);
  const m = res.body.data.filter((x: { best_bid: number | null }) => x.best_bid !== null)[skip];
  return { id: m.id, title: m.title };
}

export function movePrice(svc: Running, key: string, marketId: string, price: number) {
  return http(`${svc.api}/sandbox/markets/${marketId}/price`, {
    method: 'POST',
    headers: { 'x-api-key': key },
    json: { price },
  });
}

/** No horizontal scrolling: the page fits its viewport's width. */
export async function expectNoHorizontalOverflow(page: Page): Promise<void> {
  const [scroll, width] = await page.evaluate<[number, number]>(
    '[document.documentElement.scrollWidth, window.innerWidth]',
  );
  expect(scroll).toBeLessThanOrEqual(width);
}

const WAIT_MS = 10_000;

function exactly(text: string): RegExp {
  return new RegExp(`^\\s*${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`);
}

/** Waits until an element of `loc` shows `text` (a substring, or exactly with `exact`). */
export async function shows(loc: Locator, text: string | RegExp, exact = false): Promise<void> {
  const want = typeof text === 'string' && exact ? exactly(text) : text;
  try {
    await loc.filter({ hasText: want }).first().waitFor({ timeout: WAIT_MS });
  } catch {
    const seen = await loc.allTextContents().catch(() => []);
    throw new Error(
      `expected ${String(want)} in ${loc.toString()}; it shows ${JSON.stringify(seen)}`,
    );
  }
}

/** Waits until `loc` matches exactly `n` elements. */
export async function hasCount(loc: Locator, n: number): Promise<void> {
  const until = Date.now() + WAIT_MS;
  let seen = await loc.count();
  while (seen !== n && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 50));
    seen = await loc.count();
  }
  expect(seen).toBe(n);
}

/** Ends a page's test: it logged no console error and asked no other host for anything. */
export async function closeClean(w: Watched): Promise<void> {
  expect(w.consoleErrors).toEqual([]);
  expect(w.foreignRequests).toEqual([]);
  await w.context.close();
}
