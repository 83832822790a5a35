import { describe, expect, it } from '@jest/globals';
import { DATASET_DEFS, formatRows, headerOf } from './datasets.js';

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
});
