import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { as, type Svc, type Trader } from './orders.js';
import type { JsonResponse } from './harness.js';
import { openDatabaseOf, runWithoutBlocking } from './test-database.js';

// Export bodies are read field by field.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

export const EXPORT_SCOPES = [
  'data:read',
  'orders:read',
  'orders:write',
  'markets:read',
  'wallet:read',
  'wallet:write',
  'notifications:read',
  'webhooks:read',
  'webhooks:write',
];

/** A window around the test clock's noon that holds every seeded row. */
export const WINDOW = { start: '2026-01-01T00:00:00Z', end: '2026-12-31T00:00:00Z' };

/**
 * Appends `n` trades of `marketId` straight into a world's engine database (the app may be
 * running: WAL lets this writer in beside it), created at `createdAt`, in one transaction.
 * On PostgreSQL one statement over a connection of its own that does not block the event loop:
 * seeded through the synchronous connection, 200,000 rows held this process (and the app in it)
 * for seconds, long enough for the app's writer term to lapse (the next request: 503
 * WRITER_UNAVAILABLE) or its keep-alive sockets to expire (ECONNRESET).
 */
export async function seedTrades(
  dataDir: string,
  n: number,
  marketId: string,
  opts: {
    /** The paper or live world's file, or an ephemeral world's (`wld_...`: DATA_DIR/worlds/). */
    world?: 'paper' | 'live' | `wld_${string}`;
    createdAt?: string;
    prefix?: string;
    userId?: string;
  } = {},
): Promise<void> {
  const world = opts.world ?? 'paper';
  const at = opts.createdAt ?? '2026-11-22T11:00:00.000Z';
  const prefix = opts.prefix ?? 'fil_seed';
  const taker = opts.userId ?? 'usr_seedtaker';
  const onPostgres = await runWithoutBlocking(
    dataDir,
    world,
    `INSERT INTO trades (id, market_id, price, quantity, maker_order_id, taker_order_id, maker_user_id, taker_user_id, taker_book_side, created_at)
     SELECT $1 || lpad(CAST(i AS text), 9, '0'), $2, 1 + i % 99, 1 + i % 7, 'ord_seedmaker',
       'ord_seedtaker', 'usr_seedmaker', $3, CASE WHEN i % 2 = 0 THEN 'BID' ELSE 'ASK' END, $4
     FROM generate_series(0, $5::int) AS g(i)`,
    [prefix, marketId, taker, at, n - 1],
  );
  if (onPostgres) return;
  const db = openDatabaseOf(dataDir, world);
  try {
    const ins = db.prepare(
      `INSERT INTO trades (id, market_id, price, quantity, maker_order_id, taker_order_id, maker_user_id, taker_user_id, taker_book_side, created_at)
       VALUES (?, ?, ?, ?, 'ord_seedmaker', 'ord_seedtaker', 'usr_seedmaker', ?, ?, ?)`,
    );
    db.transaction(() => {
      for (let i = 0; i < n; i++) {
        ins.run(
          `${prefix}${String(i).padStart(9, '0')}`,
          marketId,
          1 + (i % 99),
          1 + (i % 7),
          taker,
          i % 2 === 0 ? 'BID' : 'ASK',
          at,
        );
      }
    })();
  } finally {
    db.close();
  }
}

export function exportsClient(svc: Svc) {
  const api = svc.api;
  return {
    create: (t: Pick<Trader, 'key'>, body: Record<string, unknown>): Promise<JsonResponse> =>
      as(t, `${api}/data/exports`, { method: 'POST', json: body }),
    estimate: (t: Pick<Trader, 'key'>, body: Record<string, unknown>): Promise<JsonResponse> =>
      as(t, `${api}/data/exports/estimate`, { method: 'POST', json: body }),
    get: (t: Pick<Trader, 'key'>, id: string): Promise<JsonResponse> =>
      as(t, `${api}/data/exports/${id}`),
    list: (t: Pick<Trader, 'key'>, query = ''): Promise<JsonResponse> =>
      as(t, `${api}/data/exports${query}`),
    remove: (t: Pick<Trader, 'key'>, id: string): Promise<JsonResponse> =>
      as(t, `${api}/data/exports/${id}`, { method: 'DELETE' }),
    /** Creates and asserts 202. */
    async created(t: Pick<Trader, 'key'>, body: Record<string, unknown>): Promise<Json> {
      const res = await as(t, `${api}/data/exports`, { method: 'POST', json: body });
      if (res.status !== 202) throw new Error(`create export: ${res.status} ${res.text}`);
      return res.body;
    },
    /** Polls until the export reaches `status` (or any final one other than it: an error). */
    async until(
      t: Pick<Trader, 'key'>,
      id: string,
      status = 'READY',
      timeoutMs = 20_000,
    ): Promise<Json> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const res = await as(t, `${api}/data/exports/${id}`);
        if (res.status !== 200) throw new Error(`get export: ${res.status} ${res.text}`);
        if (res.body.status === status) return res.body;
        if (
          ['FAILED', 'EXPIRED', 'READY'].includes(res.body.status as string) ||
          Date.now() > deadline
        ) {
          throw new Error(`export ${id} is ${res.text}, waiting for ${status}`);
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
}

export interface RawDownload {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** GET .../download as raw bytes (fetch would decode gzip itself). */
export function download(
  svc: Svc,
  t: Pick<Trader, 'key'>,
  id: string,
  headers: Record<string, string> = {},
): Promise<RawDownload> {
  const url = new URL(`${svc.api}/data/exports/${id}/download`);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'GET', headers: { 'x-api-key': t.key, ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

export const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
export const gunzip = (b: Buffer): Buffer => gunzipSync(b);
