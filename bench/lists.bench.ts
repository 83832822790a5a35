/**
 * bench:lists — keyset paging stays flat however deep the page. Boots the real app over a
 * temporary DATA_DIR (file-backed SQLite in WAL mode), gives one paper market 100,000 comments and
 * one paper account 100,000 orders, then pages both lists over HTTP at limit 200 with a real test
 * key (GET /markets/{id}/comments, GET /orders), start to end, PASSES times. Each page request is
 * timed; the figures are the median per-page time of the first and of the last page over the
 * passes, and their ratio, which must stay within 2 (an OFFSET pager's last page would cost
 * hundreds of times its first). Prints the figures and writes bench/results/lists.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { benchEnvironment } from './support/bench-environment.js';
import { startInProcessApp } from './support/in-process-app.js';
import { jsonClient, openMarkets, traderTestKey } from './support/api-client.js';
import { IdGenerator } from '../src/common/ids/id-generator.js';
import type { EngineEvent } from '../src/engine/index.js';
import { EngineRegistry } from '../src/modules/trading/engine-registry.js';
import type { EngineRuntime } from '../src/modules/trading/engine-runtime.js';
import { WorldDatabases } from '../src/modules/worlds/world-databases.service.js';

const ROWS = 100_000;
const LIMIT = 200;
const PASSES = 5;
const MAX_RATIO = 2;

/** `n` IOC orders that cannot fill (BUY YES at 1 against the house's asks): stored, EXPIRED. */
function placeOrders(rt: EngineRuntime, userId: string, keyId: string, marketId: string): void {
  for (let done = 0; done < ROWS;) {
    const events: EngineEvent[] = [];
    for (let i = 0; i < 5_000 && done < ROWS; i++, done++) {
      const r = rt.committedEngine().placeOrder({
        accountId: userId,
        marketId,
        action: 'BUY',
        side: 'YES',
        type: 'LIMIT',
        price: 1,
        quantity: 1,
        timeInForce: 'IOC',
        tag: keyId,
      });
      if (!r.ok) throw new Error(`placeOrder: ${r.code} ${r.message}`);
      for (const e of r.events) events.push(e);
    }
    rt.commit(events);
  }
}

/** `n` top-level comments of the user on one paper market, written in one transaction. */
function insertComments(worlds: WorldDatabases, userId: string, marketId: string): void {
  const db = worlds.connection('test');
  const ids = new IdGenerator();
  const insert = db.prepare(
    `INSERT INTO comments (id, market_id, parent_id, user_id, body, status, reply_count, report_count, created_at, edited_at)
     VALUES (?, ?, NULL, ?, ?, 'VISIBLE', 0, 0, ?, NULL)`,
  );
  const createdAt = new Date().toISOString();
  db.transaction(() => {
    for (let i = 0; i < ROWS; i++) {
      insert.run(
        ids.next('cmt'),
        marketId,
        userId,
        `comment ${i}: the market looks cheap`,
        createdAt,
      );
    }
  })();
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.floor(s.length / 2)] * 1000) / 1000;
}

interface Paged {
  pages: number;
  rows: number;
  first_page_ms: number;
  last_page_ms: number;
  median_page_ms: number;
  last_over_first: number;
  within_target: boolean;
}

async function main(): Promise<void> {
  const created = await startInProcessApp('lists');
  const { app } = created;
  try {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.getHttpServer().address() as { port: number };
    const api = `http://127.0.0.1:${address.port}/api/v1`;
    const json = jsonClient(api);
    const {
      key: apiKey,
      keyId,
      userId,
    } = await traderTestKey(json, ['orders:read', 'comments:read']);

    const rt = app.get(EngineRegistry).get('test');
    const [ordersMarket, commentsMarket] = openMarkets(rt);
    rt.ensureAccount(userId);
    let t0 = performance.now();
    placeOrders(rt, userId, keyId, ordersMarket);
    const ordersSetupMs = performance.now() - t0;
    t0 = performance.now();
    insertComments(app.get(WorldDatabases), userId, commentsMarket);
    const commentsSetupMs = performance.now() - t0;

    const page = async (path: string, cursor: string | null) => {
      const sep = path.includes('?') ? '&' : '?';
      const url = `${path}${sep}limit=${LIMIT}${cursor === null ? '' : `&cursor=${cursor}`}`;
      const s = performance.now();
      const res = await json(url, { headers: { 'x-api-key': apiKey } });
      const ms = performance.now() - s;
      if (res.status !== 200)
        throw new Error(`GET ${url}: ${res.status} ${JSON.stringify(res.body)}`);
      return {
        ms,
        rows: (res.body.data as unknown[]).length,
        next: res.body.next_cursor as string | null,
      };
    };
    const pageAll = async (path: string): Promise<Paged> => {
      const first: number[] = [];
      const last: number[] = [];
      const all: number[] = [];
      let pages = 0;
      let rows = 0;
      for (let pass = 0; pass < PASSES; pass++) {
        let cursor: string | null = null;
        pages = 0;
        rows = 0;
        const times: number[] = [];
        do {
          const p = await page(path, cursor);
          times.push(p.ms);
          pages++;
          rows += p.rows;
          cursor = p.next;
        } while (cursor !== null);
        if (rows !== ROWS) throw new Error(`${path}: paged ${rows} rows, expected ${ROWS}`);
        first.push(times[0]);
        // The last full page: the final page may be short (or, at an exact multiple, empty).
        last.push(times[times.length - 1]);
        all.push(...times);
      }
      const f = median(first);
      const l = median(last);
      const ratio = Math.round((l / f) * 100) / 100;
      return {
        pages,
        rows,
        first_page_ms: f,
        last_page_ms: l,
        median_page_ms: median(all),
        last_over_first: ratio,
        within_target: ratio <= MAX_RATIO,
      };
    };
    // One warm-up pass of each, so the first timed page is not the first request served.
    await page(`/markets/${commentsMarket}/comments`, null);
    await page('/orders', null);
    const comments = await pageAll(`/markets/${commentsMarket}/comments`);
    const orders = await pageAll('/orders');

    const figures = {
      benchmark: 'lists',
      rows_per_list: ROWS,
      limit: LIMIT,
      passes: PASSES,
      target: `last page within ${MAX_RATIO}x of the first`,
      comments,
      orders,
      setup_ms: { orders: Math.round(ordersSetupMs), comments: Math.round(commentsSetupMs) },
      ...benchEnvironment(),
    };
    console.log(JSON.stringify(figures, null, 2));
    for (const [name, p] of [
      ['comments', comments],
      ['orders', orders],
    ] as const) {
      console.log(
        `${name}: ${p.pages} pages of ${LIMIT}: first ${p.first_page_ms} ms, last ${p.last_page_ms} ms (x${p.last_over_first}, target <= ${MAX_RATIO}), median page ${p.median_page_ms} ms`,
      );
    }
    mkdirSync('bench/results', { recursive: true });
    writeFileSync('bench/results/lists.json', JSON.stringify(figures, null, 2) + '\n');
  } finally {
    await created.close();
  }
}

void main();
