// Real Chromium for the browser pages' tests: Debian's package driven by playwright-core (Playwright's own
// browser download cannot be reached here), with the flags this machine's closed network needs.
import { afterFile } from './jest-suite.js';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './process.js';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

export function chromiumPath(): string {
  const path = process.env.CHROMIUM_PATH ?? CANDIDATES.find((p) => existsSync(p));
  if (!path) {
    throw new Error(
      'Chromium is not installed: apt-get install -y chromium (.ci/run does it when missing)',
    );
  }
  return path;
}

export interface Watched {
  page: Page;
  context: BrowserContext;
  /** console.error lines and uncaught page errors, in order. */
  consoleErrors: string[];
  /** Every URL the page asked for whose origin is not the service's (there must be none). */
  foreignRequests: string[];
}

export interface BrowserHandle {
  browser: Browser;
  /** A fresh context (its own storage) and page, watching console errors and off-origin requests. */
  open(origin: string, viewport?: { width: number; height: number }): Promise<Watched>;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<BrowserHandle> {
  const browser = await chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ], // launch() gives each browser a new empty profile directory of its own and removes it on close
  });
  return {
    browser,
    async open(origin, viewport = { width: 1280, height: 800 }) {
      const context = await browser.newContext({ viewport });
      const page = await context.newPage();
      const consoleErrors: string[] = [];
      const foreignRequests: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error') consoleErrors.push(m.text());
      });
      page.on('pageerror', (e) => consoleErrors.push(`pageerror: ${e.message}`));
      page.on('request', (r) => {
        const url = r.url();
        if (url.startsWith('data:') || url.startsWith('blob:')) return;
        if (new URL(url).origin !== origin) foreignRequests.push(url);
      });
      return { page, context, consoleErrors, foreignRequests };
    },
    async close() {
      await browser.close();
    },
  };
}

let shared: Promise<BrowserHandle> | undefined;

/**
 * One Chromium for every test of the Jest test file (a suite file importing several case files
 * included): launched by the first caller, closed after the file's last test. Tests still get a
 * fresh context each ({@link BrowserHandle.open}); callers never close it themselves.
 */
export function sharedBrowser(): Promise<BrowserHandle> {
  shared ??= launchBrowser();
  return shared;
}

// One close for the test file: a suite file imports several case files that share the browser.
afterFile(async () => {
  const browser = shared;
  shared = undefined;
  if (browser !== undefined) await (await browser).close();
});

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * A screenshot the README shows (`docs/<name>`): taken on every run, so the page must render,
 * but written only with UPDATE_SCREENSHOTS=1 (`npm run docs:screenshots`), so that running the
 * tests leaves the working tree as it was.
 */
export async function docsScreenshot(page: Page, name: string): Promise<void> {
  const png = await page.screenshot();
  if (png.length < 1000 || !png.subarray(0, 8).equals(PNG_SIGNATURE)) {
    throw new Error(`the screenshot for docs/${name} is not a PNG image (${png.length} bytes)`);
  }
  if (process.env.UPDATE_SCREENSHOTS === '1') writeFileSync(join(ROOT, 'docs', name), png);
}
