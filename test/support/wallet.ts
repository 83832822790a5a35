import { expect } from '@jest/globals';
import type { JsonResponse, Running } from './harness.js';
import { as, type Trader } from './orders.js';

type Svc = Pick<Running, 'api'>;

/** A ledger row as GET /transactions/cursor answers it. */
export interface Txn {
  id: string;
  type: string;
  amount_cents: number;
  balance_after_cents: number;
  reference_id: string | null;
  created_at: string;
}

/** A position as GET /positions/cursor answers it. */
export interface Position {
  market_id: string;
  side: 'YES' | 'NO' | null;
  quantity: number;
  average_price: number | null;
  cost_basis_cents: number;
  realized_pnl_cents: number;
  unrealized_pnl_cents: number | null;
  mark_price: number | null;
}

/**
 * GET a list, asserting 200, following next_cursor to the end. `between` runs after each page
 * that has a next one, before that one is read (to change the list while it is being paged).
 */
export async function allPages<T>(
  svc: Svc,
  t: Pick<Trader, 'key'>,
  path: string,
  query: Record<string, string> = {},
  between?: () => Promise<unknown>,
): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | null = null;
  do {
    const q = new URLSearchParams({ limit: '200', ...query });
    if (cursor !== null) q.set('cursor', cursor);
    const res: JsonResponse = await as(t, `${svc.api}${path}?${q.toString()}`);
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.text}`);
    out.push(...(res.body.data as T[]));
    cursor = res.body.next_cursor as string | null;
    if (cursor !== null && between !== undefined) await between();
  } while (cursor !== null);
  return out;
}

export const ledger = (svc: Svc, t: Pick<Trader, 'key'>, query: Record<string, string> = {}) =>
  allPages<Txn>(svc, t, '/transactions/cursor', query);

export const positions = (svc: Svc, t: Pick<Trader, 'key'>, query: Record<string, string> = {}) =>
  allPages<Position>(svc, t, '/positions/cursor', query);

/** POST /sandbox/wallet/fund (the key needs wallet:write), asserting 201: one FUNDING row. */
export async function fund(svc: Svc, t: Pick<Trader, 'key'>, amount: number): Promise<Txn> {
  const res = await as(t, `${svc.api}/sandbox/wallet/fund`, {
    method: 'POST',
    json: { amount_cents: amount },
  });
  if (res.status !== 201) throw new Error(`fund: ${res.status} ${res.text}`);
  return res.body.transaction as Txn;
}

/** GET /wallet, asserting 200 and the shape. */
export async function walletOf(
  svc: Svc,
  t: Pick<Trader, 'key'>,
): Promise<{
  environment: string;
  currency: string;
  balance_cents: number;
  reserved_cents: number;
  available_cents: number;
}> {
  const res = await as(t, `${svc.api}/wallet`);
  if (res.status !== 200) throw new Error(`wallet: ${res.status} ${res.text}`);
  expect(Object.keys(res.body as object).sort()).toEqual([
    'available_cents',
    'balance_cents',
    'currency',
    'environment',
    'reserved_cents',
  ]);
  expect(res.body.available_cents).toBe(res.body.balance_cents - res.body.reserved_cents);
  return res.body;
}

/** The ledger sums to the balance, and each row's balance_after follows from the one before. */
export function expectLedgerConsistent(rows: Txn[], balance: number): void {
  const oldestFirst = [...rows].reverse();
  let running = 0;
  for (const r of oldestFirst) {
    running += r.amount_cents;
    expect([r.id, r.balance_after_cents]).toEqual([r.id, running]);
  }
  expect(running).toBe(balance);
}
