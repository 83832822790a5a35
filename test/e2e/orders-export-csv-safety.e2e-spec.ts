import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Running } from '../support/harness.js';
import {
  as,
  limit,
  place,
  startOrdersApp,
  TRADABLE,
  trader,
  type Trader,
} from '../support/orders.js';
import { openDatabaseOf } from '../support/test-database.js';

/**
 * GET /orders/export writes a text cell that a spreadsheet would run as a formula (=, +, -, @, a
 * tab or a carriage return first) with a leading ' (OWASP CSV injection). client_order_id is the
 * user's text: "-1" is placed through the API (its pattern allows it); the other starts, which
 * the pattern refuses today, are stored straight into the paper database, as an older or future
 * rule could have let them in, and must come out prefixed all the same.
 */
describe('orders export: CSV injection', () => {
  let svc: Running;
  let t: Trader;
  const stored = ['=HYPERLINK("http://evil.test","x")', '+1', '@SUM(A1)', '\tx', '\rx'];

  beforeAll(async () => {
    svc = await startOrdersApp();
    t = await trader(svc);
    const m = TRADABLE[0];
    await place(svc, t, { ...limit(m, 'BUY', 'YES', m.reference - 10, 1), client_order_id: '-1' });
    await place(svc, t, {
      ...limit(m, 'BUY', 'YES', m.reference - 10, 1),
      client_order_id: 'plain-1',
    });
    const db = openDatabaseOf(svc.dataDir, 'paper');
    const insert = db.prepare(
      `INSERT INTO orders (id, user_id, key_id, client_order_id, market_id, action, side, type, price,
       book_side, book_price, quantity, filled_quantity, fill_cost, status, cancel_reason, time_in_force,
       post_only, sequence, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, 'BUY', 'YES', 'LIMIT', 40, 'BID', 40, 1, 0, 0, 'CANCELLED', 'USER', 'GTC', FALSE, ?, ?, ?)`,
    );
    stored.forEach((cid, i) =>
      insert.run(
        `ord_00${String(i).padStart(8, '0')}`,
        t.userId,
        t.keyId,
        cid,
        m.id,
        2_000_000 + i,
        '2026-11-01T00:00:00.000Z',
        '2026-11-01T00:00:01.000Z',
      ),
    );
    db.close();
  });

  afterAll(() => svc.close());

  it("prefixes =, +, -, @, tab and CR cells with ' and leaves other text and the numbers alone", async () => {
    const res = await as(t, `${svc.api}/orders/export`);
    expect(res.status).toBe(200);
    const text = res.text;
    // Each tricky client_order_id, as the CSV spells it (CR forces quoting, quotes are doubled).
    expect(text).toContain(`,"'=HYPERLINK(""http://evil.test"",""x"")",`);
    expect(text).toContain(`,'+1,`);
    expect(text).toContain(`,'@SUM(A1),`);
    expect(text).toContain(`,'\tx,`);
    expect(text).toContain(`,"'\rx",`);
    expect(text).toContain(`,'-1,`);
    // Ordinary text and the service's own numbers stay as they were.
    expect(text).toContain(',plain-1,');
    const plain = text.split('\n').find((l) => l.includes(',plain-1,'))!;
    expect(plain.split(',')[6]).toBe(String(TRADABLE[0].reference - 10));
    // No cell anywhere starts with a formula character unprefixed.
    for (const line of text.split('\n').slice(1)) {
      for (const cell of line.split(',')) expect(cell).not.toMatch(/^[=+\-@\t]/);
    }
  });
});
