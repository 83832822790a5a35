import { describe, expect, it } from '@jest/globals';
import { DATASET_DEFS, formatRows, headerOf, readerSql } from './datasets.js';

describe('formatRows', () => {
  const orders = DATASET_DEFS.ORDERS;
  // rowid first, then the fields in order.
  const row = [
    7,
    'ord_1',
    '=HYPERLINK("x")',
    'mkt_1',
    'BUY',
    'YES',
    'LIMIT',
    40,
    3,
    3,
    120,
    'FILLED',
    null,
    'GTC',
    1,
    'CANCEL_MAKER',
    '2026-11-22T12:00:00.000Z',
    '2026-11-22T12:00:00.000Z',
  ];

  it('writes CSV through the injection-safe cell, booleans as true/false, a header of the fields', () => {
    expect(headerOf(orders, 'CSV')).toBe(
      'id,client_order_id,market_id,action,side,type,price,quantity,filled_quantity,filled_cost_cents,status,cancel_reason,time_in_force,post_only,self_trade_prevention,created_at,updated_at\n',
    );
    expect(formatRows(orders, 'CSV', [row])).toBe(
      `ord_1,"'=HYPERLINK(""x"")",mkt_1,BUY,YES,LIMIT,40,3,3,120,FILLED,,GTC,true,CANCEL_MAKER,2026-11-22T12:00:00.000Z,2026-11-22T12:00:00.000Z\n`,
    );
  });

  it('writes JSONL as one object a line keyed by the fields, values as stored', () => {
    expect(headerOf(orders, 'JSONL')).toBe('');
    const line = formatRows(orders, 'JSONL', [row, row]).split('\n');
    expect(line).toHaveLength(3);
    expect(JSON.parse(line[0])).toMatchObject({
      id: 'ord_1',
      client_order_id: '=HYPERLINK("x")',
      post_only: true,
      self_trade_prevention: 'CANCEL_MAKER',
      filled_cost_cents: 120,
    });
  });

  it('writes null as an empty CSV cell and JSON null', () => {
    const ledger = DATASET_DEFS.LEDGER;
    const r = [1, 'txn_1', 'FUNDING', 100, 100, null, '2026-11-22T12:00:00.000Z'];
    expect(formatRows(ledger, 'CSV', [r])).toBe(
      'txn_1,FUNDING,100,100,,2026-11-22T12:00:00.000Z\n',
    );
    expect(JSON.parse(formatRows(ledger, 'JSONL', [r])).reference_id).toBeNull();
  });

  it("writes PostgreSQL's booleans as SQLite's 0/1 are written: the same bytes on both engines", () => {
    const pgRow = row.map((v, i) => (i === 14 ? true : v));
    const pgFalse = row.map((v, i) => (i === 14 ? false : v));
    const liteFalse = row.map((v, i) => (i === 14 ? 0 : v));
    for (const format of ['CSV', 'JSONL'] as const) {
      expect(formatRows(orders, format, [pgRow])).toBe(formatRows(orders, format, [row]));
      expect(formatRows(orders, format, [pgFalse])).toBe(formatRows(orders, format, [liteFalse]));
    }
  });
});

describe('readerSql', () => {
  const fills = DATASET_DEFS.FILLS;

  it('reads SQLite by rowid ranges, NOT INDEXED, as it always has', () => {
    expect(readerSql('sqlite', 'page', DATASET_DEFS.LEDGER, false)).toBe(
      'SELECT rowid, id, type, amount_cents, balance_after_cents, reference_id, created_at FROM ledger NOT INDEXED WHERE rowid > @lo AND rowid <= @hi AND created_at >= @start AND created_at < @end AND user_id = @user ORDER BY rowid LIMIT @limit',
    );
    expect(readerSql('sqlite', 'last', fills, false)).toBe('SELECT max(rowid) AS m FROM trades');
  });

  it('reads PostgreSQL in keyset pages on row_seq, with the same filters', () => {
    const page = readerSql('postgres', 'page', fills, true);
    expect(page).toMatch(/^SELECT row_seq, id, market_id, /);
    expect(page).toContain(
      'FROM trades WHERE row_seq > @lo AND row_seq <= @hi AND created_at >= @start AND created_at < @end AND (maker_user_id = @user OR taker_user_id = @user) AND market_id IN (SELECT value FROM json_each(@markets))',
    );
    expect(page).toMatch(/ORDER BY row_seq LIMIT @limit$/);
    expect(page).not.toMatch(/rowid|NOT INDEXED/);
    expect(readerSql('postgres', 'count', fills, false)).toMatch(
      /^SELECT COUNT\(\*\) AS n FROM trades WHERE row_seq > @lo AND row_seq <= @hi /,
    );
    expect(readerSql('postgres', 'last', fills, false)).toBe(
      'SELECT max(row_seq) AS m FROM trades',
    );
  });
});
