import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startService, type ServiceProcess } from '../support/process.js';
import { as, limit, place, placeRaw, TRADABLE, trader } from '../support/orders.js';
import { dropDatabaseOf, openDatabaseOf } from '../support/test-database.js';

const ROWS = 100_000;
const HEAP_MB = 96;
const COLUMNS =
  'id,client_order_id,market_id,action,side,type,price,quantity,filled_quantity,filled_cost_cents,' +
  'status,cancel_reason,time_in_force,post_only,self_trade_prevention,created_at,updated_at';

/** One CSV record (RFC 4180 quoting; the export writes no newline inside a field). */
function parseCsvLine(line: string): string[] {
  const out: string[] = [];
  let i = 0;
  for (;;) {
    if (line[i] === '"') {
      let v = '';
      i++;
      for (;;) {
        const q = line.indexOf('"', i);
        if (q < 0) throw new Error(`unterminated quote: ${line}`);
        v += line.slice(i, q);
        if (line[q + 1] === '"') {
          v += '"';
          i = q + 2;
        } else {
          i = q + 1;
          break;
        }
      }
      out.push(v);
    } else {
      const c = line.indexOf(',', i);
      out.push(line.slice(i, c < 0 ? line.length : c));
      i = c < 0 ? line.length : c;
    }
    if (i >= line.length) return out;
    if (line[i] !== ',') throw new Error(`bad CSV at ${i}: ${line}`);
    i++;
  }
}

/** Resident set size of a process in bytes (Linux /proc), or null elsewhere. */
function rssOf(pid: number): number | null {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m === null ? null : Number(m[1]) * 1024;
  } catch {
    return null;
  }
}

/**
 * Inserts the `rows` closed orders of the export (order i: id `ord_00` and i in 8 digits, market
 * TRADABLE[i % TRADABLE.length], status FILLED, CANCELLED, EXPIRED by i % 3, ...: what the checks
 * below expect of row i) for `userId` and `keyId` into the paper engine's database of the service
 * on `dataDir`, in one statement on either engine (a recursive row counter): no row crosses from
 * this process, where 100,000 rows sent one by one or as arrays took seconds on PostgreSQL.
 */
function insertOrders(dataDir: string, rows: number, userId: string, keyId: string): void {
  const market = TRADABLE.map((x, k) => `WHEN ${k} THEN '${x.id}'`).join(' ');
  const qty = '(1 + i % 50)';
  const filled = `CASE i % 3 WHEN 0 THEN ${qty} WHEN 1 THEN ${qty} / 2 ELSE 0 END`;
  const db = openDatabaseOf(dataDir, 'paper');
  try {
    db.prepare(
      `WITH RECURSIVE g(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM g WHERE i < ?)
       INSERT INTO orders (id, user_id, key_id, client_order_id, market_id, action, side, type,
         price, book_side, book_price, quantity, filled_quantity, fill_cost, status, cancel_reason,
         time_in_force, post_only, sequence, created_at, updated_at)
       SELECT 'ord_00' || substr(CAST(100000000 + i AS TEXT), 2), ?, ?,
         CASE WHEN i % 1000 = 7 THEN 'tricky,"' || i || '"' WHEN i % 3 = 0 THEN NULL
           ELSE 'c-' || i END,
         CASE i % ${TRADABLE.length} ${market} END,
         CASE WHEN i % 2 = 0 THEN 'BUY' ELSE 'SELL' END,
         CASE WHEN i % 4 < 2 THEN 'YES' ELSE 'NO' END,
         'LIMIT', 1 + i % 99, 'BID', 1 + i % 99, ${qty}, ${filled}, (${filled}) * (1 + i % 99),
         CASE i % 3 WHEN 0 THEN 'FILLED' WHEN 1 THEN 'CANCELLED' ELSE 'EXPIRED' END,
         CASE WHEN i % 3 = 1 THEN 'USER' END,
         CASE WHEN i % 3 = 2 THEN 'IOC' ELSE 'GTC' END,
         FALSE, 1000000 + i, '2026-11-01T00:00:00.000Z', '2026-11-01T00:00:01.000Z'
       FROM g`,
    ).run(rows - 1, userId, keyId);
  } finally {
    db.close();
  }
}

/**
 * GET /orders/export streams in constant memory (issue 4): 100,000 orders of one user, inserted
 * straight into the paper engine's database beside the running server (DATA_DIR/paper.sqlite;
 * in the PostgreSQL pass the process's database on the pass's PostgreSQL, which it runs on with
 * the pass's Redis), are exported by the built server running as a child process with its V8
 * heap capped at 96 MB (--max-old-space-size). A non-streaming export (every row read at once
 * with the repository's statement, then joined into one CSV string) was tried in the same server
 * under the same cap: it died with "JavaScript heap out of memory" inside better-sqlite3's
 * Statement.all; uncapped, it took the heap from 53 to 206 MB. So the whole CSV arriving here,
 * parse-checked row by row, is the constant-memory proof. The child's resident memory is also
 * sampled (every 10 ms, from /proc) while the CSV streams, and its growth must stay under 50 MB.
 */
describe('orders: CSV export of 100,000 orders in constant memory', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-orders-export-'));
  const env = { SANDBOX_FEED_INTERVAL_MS: '0', RATE_LIMITS_ENABLED: 'false', LOG_LEVEL: 'warn' };
  let svc: ServiceProcess | undefined;

  afterAll(async () => {
    await svc?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
    await dropDatabaseOf(dataDir);
  });

  it('streams a header and 100,000 parse-checked rows under a 96 MB heap cap', async () => {
    // One start, heap capped: schema, seeds, the user's key and one order placed through the API.
    svc = await startService({
      dataDir,
      env: { ...env, NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}` },
      testDatabase: true,
    });
    const t = await trader(svc);
    const m = TRADABLE[0];
    const real = await place(svc, t, limit(m, 'BUY', 'YES', m.reference - 10, 3));

    // 100,000 closed orders, inserted beside the running service in one transaction (closed
    // orders are only in the database, never in the engine's books). Ids sort before the real
    // order's, so the real (open) order is the export's last row.
    const statuses = ['FILLED', 'CANCELLED', 'EXPIRED'] as const;
    const idOf = (i: number) => `ord_00${String(i).padStart(8, '0')}`;
    const cidOf = (i: number) => (i % 1000 === 7 ? `tricky,"${i}"` : i % 3 === 0 ? null : `c-${i}`);
    insertOrders(dataDir, ROWS, t.userId, t.keyId);

    const pid = svc.proc.pid!;
    // Warm up the route once (first-use allocations are not the export's).
    expect((await as(t, `${svc.api}/orders?limit=1`)).status).toBe(200);
    const baseRss = rssOf(pid);
    let peakRss = baseRss ?? 0;
    const sampler = setInterval(() => {
      const r = rssOf(pid);
      if (r !== null && r > peakRss) peakRss = r;
    }, 10);

    const started = Date.now();
    const res = await fetch(`${svc.api}/orders/export`, { headers: { 'x-api-key': t.key } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(res.headers.get('content-disposition')).toMatch(
      /attachment; filename="orders-test\.csv"/,
    );
    // Read and check the CSV as it arrives, line by line (the client keeps no copy either).
    const decoder = new TextDecoder();
    let rest = '';
    let header: string | null = null;
    let rows = 0;
    let lastId = '';
    let bytes = 0;
    // Plain comparisons per row (an expect() per field of 100,000 rows would dominate the run);
    // the first mismatch is kept and asserted at the end.
    const problems: string[] = [];
    const same = (what: string, got: unknown, want: unknown): void => {
      if (problems.length < 5 && JSON.stringify(got) !== JSON.stringify(want)) {
        problems.push(`${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
      }
    };
    const check = (line: string): void => {
      if (header === null) {
        header = line;
        return;
      }
      const f = parseCsvLine(line);
      same('columns', f.length, 17);
      if (!(f[0] > lastId)) same(`order of ${f[0]}`, f[0], `> ${lastId}`); // oldest first, no duplicate
      if (f[0] > real.id) same('a row after the export began', f[0], real.id);
      lastId = f[0];
      if (f[0] === real.id) {
        same('the placed order', f.slice(1, 15), [
          '',
          m.id,
          'BUY',
          'YES',
          'LIMIT',
          String(m.reference - 10),
          '3',
          '0',
          '0',
          'CANCELLED',
          'USER',
          'GTC',
          'false',
          'CANCEL_TAKER',
        ]);
      } else {
        const i = Number(f[0].slice(6));
        const status = statuses[i % 3];
        same(
          `row ${i}`,
          [f[0], f[1], f[2], f[6], f[7], f[10], f[11], f[14], f[15]],
          [
            idOf(i),
            cidOf(i) ?? '',
            TRADABLE[i % TRADABLE.length].id,
            String(1 + (i % 99)),
            String(1 + (i % 50)),
            status,
            status === 'CANCELLED' ? 'USER' : '',
            // Rows from before the column existed read as the default mode.
            'CANCEL_TAKER',
            '2026-11-01T00:00:00.000Z',
          ],
        );
      }
      rows++;
    };
    // Once the export streams, the same user cancels the real order and places another. The
    // export reads a chunk a turn, so the cancel is committed long before it reaches its last
    // row, the real order (read synchronously, it held every other request until it ended, and
    // the row said OPEN); the new order is after its end, so not in it.
    let probe: Promise<[number, number, string]> | null = null;
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      probe ??= (async () => {
        const cancel = await as(t, `${svc!.api}/orders/${real.id}`, { method: 'DELETE' });
        const late = await placeRaw(svc!, t, limit(m, 'BUY', 'YES', m.reference - 11, 2));
        return [cancel.status, late.status, String(late.body.id)];
      })();
      bytes += chunk.byteLength;
      rest += decoder.decode(chunk, { stream: true });
      let nl = rest.indexOf('\n');
      while (nl >= 0) {
        check(rest.slice(0, nl));
        rest = rest.slice(nl + 1);
        nl = rest.indexOf('\n');
      }
    }
    clearInterval(sampler);
    const streamMs = Date.now() - started;
    const [cancelled, placed, lateId] = await probe!;
    expect([cancelled, placed]).toEqual([200, 201]);
    expect(lastId).toBe(real.id);
    expect(lateId > real.id).toBe(true);
    expect(problems).toEqual([]);
    expect(rest).toBe('');
    expect(header).toBe(COLUMNS);
    expect(rows).toBe(ROWS + 1);
    // The server is alive and well after it.
    expect((await as(t, `${svc.api}/orders?limit=1`)).status).toBe(200);
    expect(svc.proc.exitCode).toBeNull();
    if (baseRss !== null) {
      const growth = peakRss - baseRss;
      console.log(
        `export: ${rows} rows, ${(bytes / 1e6).toFixed(1)} MB of CSV; server RSS ${(baseRss / 1e6).toFixed(0)} MB -> peak ${(peakRss / 1e6).toFixed(0)} MB (+${(growth / 1e6).toFixed(1)} MB) under a ${HEAP_MB} MB heap cap, ${streamMs} ms`,
      );
      expect(growth).toBeLessThan(50 * 1024 * 1024);
    }
  });
});
