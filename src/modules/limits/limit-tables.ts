import type { Tier } from '../../common/http/request-context.js';

/** SPEC.md Limits, per-key throughput (requests per minute). */
export const TIER_PER_MINUTE: Record<Tier, number> = { FREE: 60, PRO: 600, ENTERPRISE: 6000 };

/** SPEC.md Limits, quotas (metered while DATA_API_USAGE_METERING_ENABLED is on). */
export const TIER_QUOTAS: Record<Tier, { day: number; month: number }> = {
  FREE: { day: 1_000, month: 20_000 },
  PRO: { day: 50_000, month: 1_000_000 },
  ENTERPRISE: { day: 2_000_000, month: 50_000_000 },
};

/**
 * Rows of historical data exports a key may export per UTC calendar month, by tier (metered
 * while DATA_API_USAGE_METERING_ENABLED is on; charged at creation with the rows counted then).
 */
export const EXPORT_ROW_QUOTAS: Record<Tier, number> = {
  FREE: 1_000_000,
  PRO: 50_000_000,
  ENTERPRISE: 1_000_000_000,
};

export type IpCategory =
  | 'auth'
  | 'waitlist'
  | 'app-shell'
  | 'wallet'
  | 'markets'
  | 'comments'
  | 'orders'
  | 'admin'
  | 'referrals'
  | 'general';

/** SPEC.md Limits, per-IP ceilings: requests per 60 s window, by path category. */
export const IP_CEILINGS: Record<IpCategory, number> = {
  auth: 60,
  waitlist: 30,
  'app-shell': 300,
  wallet: 300,
  markets: 600,
  comments: 120,
  orders: 120,
  admin: 200,
  referrals: 10,
  general: 600,
};

export const IP_WINDOW_SECONDS = 60;

/**
 * CONTRACT.md's mapping from the path after /api/v1 to a category; the first match wins, so
 * market comments come before markets. Paths outside /api/v1 are `general`, but for the browser
 * pages (/explorer, /app), which are app-shell.
 */
export const IP_CATEGORY_RULES: [RegExp, IpCategory][] = [
  [/^\/(auth|api-keys|security|developer-terms)(\/|$)/, 'auth'],
  [/^\/waitlist(\/|$)/, 'waitlist'],
  [/^\/(app|openapi|changelog)(\/|$|\.)/, 'app-shell'],
  [/^\/(wallet|transactions|positions)(\/|$)/, 'wallet'],
  [/^\/comments(\/|$)/, 'comments'],
  [/^\/markets\/[^/]+\/comments(\/|$)/, 'comments'],
  [/^\/(markets|sports|crypto|indices|rank)(\/|$)/, 'markets'],
  [/^\/(orders|rfq)(\/|$)/, 'orders'],
  [/^\/admin(\/|$)/, 'admin'],
  [/^\/referrals(\/|$)/, 'referrals'],
];

const PREFIX = '/api/v1';

/** The browser pages the service serves outside /api/v1 (CONTRACT.md "Browser pages"). */
const APP_SHELL_PAGES = /^\/(explorer|app)(\/|$)/;

export function ipCategoryOf(url: string): IpCategory {
  const path = url.split('?')[0];
  if (APP_SHELL_PAGES.test(path)) return 'app-shell';
  if (!path.startsWith(PREFIX + '/') && path !== PREFIX) return 'general';
  const rest = path.slice(PREFIX.length);
  for (const [re, cat] of IP_CATEGORY_RULES) if (re.test(rest)) return cat;
  return 'general';
}

/** UTC calendar windows: [start, end) of the minute, the day and the month containing `now`. */
export function minuteWindow(now: number): [number, number] {
  const start = now - (now % 60_000);
  return [start, start + 60_000];
}

export function dayWindow(now: number): [number, number] {
  const start = now - (now % 86_400_000);
  return [start, start + 86_400_000];
}

export function monthWindow(now: number): [number, number] {
  const d = new Date(now);
  const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const end = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  return [start, end];
}
