/**
 * What bench:orders and bench:orders-ab set up on a service: verified traders with test keys,
 * the seeded markets, and the deterministic order stream every server is driven with.
 */
import Database from 'better-sqlite3';
import type pg from 'pg';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Share of marketable orders (MARKET or crossing IOC); the rest rest on the book. */
export const MARKETABLE_SHARE = 0.15;
/** Traders (each with a test key): the seeded trader plus fresh verified accounts. */
export const TRADERS = 16;
const PASSWORD = 'bench-password-123';

export async function json(
  url: string,
  init: RequestInit & { json?: unknown } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const headers = new Headers(init.headers);
  if (init.json !== undefined) headers.set('content-type', 'application/json');
  const res = await fetch(url, {
    ...init,
    headers,
    body: init.json === undefined ? init.body : JSON.stringify(init.json),
  });
  const text = await res.text();
  return {
    status: res.status,
    body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>),
  };
}

/**
 * Where a bench reads the verification mail the service sent to `email` (its body, or undefined
 * if there is none): the service's platform.sqlite, or its PostgreSQL platform schema.
 */
export type MailReader = (email: string) => Promise<string | undefined>;

/** The mail reader of a PostgreSQL service: its platform schema, through `admin`. */
export const postgresMail =
  (admin: pg.Client): MailReader =>
  async (email) => {
    const r = await admin.query<{ body: string }>(
      "SELECT body FROM platform.mail_outbox WHERE to_address = $1 AND kind = 'EMAIL_VERIFICATION' ORDER BY id DESC LIMIT 1",
      [email],
    );
    return r.rows[0]?.body;
  };

/** The mail reader of a SQLite service whose data directory is `dataDir`. */
export function sqliteMail(dataDir: string): MailReader {
  return (email) => {
    const db = new Database(join(dataDir, 'platform.sqlite'), { readonly: true });
    try {
      const mail = db
        .prepare(
          "SELECT body FROM mail_outbox WHERE to_address = ? AND kind = 'EMAIL_VERIFICATION' ORDER BY id DESC LIMIT 1",
        )
        .get(email) as { body: string } | undefined;
      return Promise.resolve(mail?.body);
    } finally {
      db.close();
    }
  };
}

/** Registers and verifies a fresh account (the mailed token is read with `mail`). */
async function verifiedUser(api: string, mail: MailReader, email: string): Promise<void> {
  const reg = await json(`${api}/auth/register`, {
    method: 'POST',
    json: { email, password: PASSWORD },
  });
  if (reg.status !== 201) throw new Error(`register ${email}: ${reg.status}`);
  const token = /"token": "([0-9A-Za-z]+)"/.exec((await mail(email)) ?? '')?.[1];
  if (token === undefined) throw new Error(`no verification mail for ${email}`);
  const ok = await json(`${api}/auth/verify-email`, { method: 'POST', json: { token } });
  if (ok.status !== 200) throw new Error(`verify ${email}: ${ok.status}`);
}

async function testKey(api: string, email: string, password: string): Promise<string> {
  const login = await json(`${api}/auth/login`, { method: 'POST', json: { email, password } });
  if (login.status !== 200) throw new Error(`login ${email}: ${login.status}`);
  const key = await json(`${api}/api-keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${String(login.body.token)}` },
    json: {
      name: 'bench',
      environment: 'test',
      scopes: ['orders:read', 'orders:write'],
      acknowledge_write_scopes: true,
    },
  });
  if (key.status !== 201) {
    throw new Error(`key ${email}: ${key.status} ${JSON.stringify(key.body)}`);
  }
  return String(key.body.key);
}

export interface Market {
  id: string;
  reference: number;
}

/** The seeded OPEN markets of the repository at `root`, with their ids and reference prices. */
export function seededMarkets(root: string): Market[] {
  const seeds = JSON.parse(readFileSync(join(root, 'seeds', 'markets.json'), 'utf8')) as {
    slug: string;
    reference_price: number;
    status: string;
  }[];
  return seeds
    .filter((m) => m.status === 'OPEN')
    .map((m) => ({
      id: `mkt_${createHash('sha256').update(m.slug).digest('hex').slice(0, 20)}`,
      reference: m.reference_price,
    }));
}

/** A deterministic stream of (key, body) pairs: keys round robin, markets round robin. */
export function orderStream(
  markets: Market[],
  keys: string[],
): () => { key: string; body: string } {
  let i = 0;
  let seed = 20261122;
  const rnd = (): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x80000000;
  };
  return () => {
    const n = i++;
    const m = markets[n % markets.length];
    const key = keys[Math.floor(n / markets.length) % keys.length];
    const qty = 1 + Math.floor(rnd() * 5);
    let body: Record<string, unknown>;
    if (rnd() < MARKETABLE_SHARE) {
      // Marketable: a MARKET order, or an IOC LIMIT 8 cents through the reference.
      const action = rnd() < 0.5 ? 'BUY' : 'SELL';
      body =
        rnd() < 0.5
          ? { market_id: m.id, action, side: 'YES', type: 'MARKET', quantity: qty }
          : {
              market_id: m.id,
              action,
              side: 'YES',
              type: 'LIMIT',
              price: Math.min(99, Math.max(1, m.reference + (action === 'BUY' ? 8 : -8))),
              quantity: qty,
              time_in_force: 'IOC',
            };
    } else {
      // Resting: bids below the house ladder, asks above it, in YES or NO terms.
      const bid = rnd() < 0.5;
      const depth = 6 + Math.floor(rnd() * 12);
      const yesPrice = Math.min(99, Math.max(1, bid ? m.reference - depth : m.reference + depth));
      body =
        rnd() < 0.3
          ? {
              market_id: m.id,
              action: bid ? 'SELL' : 'BUY',
              side: 'NO',
              type: 'LIMIT',
              price: 100 - yesPrice,
              quantity: qty,
            }
          : {
              market_id: m.id,
              action: bid ? 'BUY' : 'SELL',
              side: 'YES',
              type: 'LIMIT',
              price: yesPrice,
              quantity: qty,
            };
    }
    return { key, body: JSON.stringify(body) };
  };
}

/**
 * The test keys of {@link TRADERS} traders on the service at `api`: its data directory (SQLite),
 * or how to read its verification mail (PostgreSQL).
 */
export async function traderKeys(api: string, dataDir: string | MailReader): Promise<string[]> {
  const mail = typeof dataDir === 'string' ? sqliteMail(dataDir) : dataDir;
  const keys = [await testKey(api, 'trader@sandbox.test', 'sandbox-password')];
  for (let i = 1; i < TRADERS; i++) {
    const email = `bench-${i}@orders.bench`;
    await verifiedUser(api, mail, email);
    keys.push(await testKey(api, email, PASSWORD));
  }
  return keys;
}
