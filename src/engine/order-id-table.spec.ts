import { describe, expect, it } from '@jest/globals';
import { mulberry32 } from './price-feed.js';
import { OrderIdTable } from './order-id-table.js';
import { BookOrder } from './order.js';

function order(id: string): BookOrder {
  const o = new BookOrder();
  o.id = id;
  return o;
}

describe('OrderIdTable', () => {
  it('finds what was added and forgets what was removed', () => {
    const t = new OrderIdTable();
    const a = order('ord_1');
    const b = order('ord_2');
    t.add(a);
    t.add(b);
    expect(t.get('ord_1')).toBe(a);
    expect(t.get('ord_2')).toBe(b);
    expect(t.get('ord_3')).toBeUndefined();
    t.remove(a);
    expect(a.idSlot).toBe(-1);
    expect(t.get('ord_1')).toBeUndefined();
    expect(t.get('ord_2')).toBe(b);
    expect(t.size).toBe(1);
  });

  it('agrees with a Map over random adds and removes, through growth and probe-run shifts', () => {
    const rnd = mulberry32(7);
    const t = new OrderIdTable();
    const ref = new Map<string, BookOrder>();
    const live: BookOrder[] = [];
    let next = 0;
    for (let step = 0; step < 60_000; step++) {
      if (live.length === 0 || rnd() < 0.55) {
        // Both sequential and random-looking ids, as the engine meets them.
        const id = rnd() < 0.5 ? `ord_${next++}` : `ord_${Math.floor(rnd() * 1e12).toString(32)}`;
        if (ref.has(id)) continue;
        const o = order(id);
        t.add(o);
        ref.set(id, o);
        live.push(o);
      } else {
        const k = Math.floor(rnd() * live.length);
        const o = live[k];
        live[k] = live[live.length - 1];
        live.pop();
        t.remove(o);
        ref.delete(o.id);
      }
      if (step % 997 === 0) {
        let wrong = 0;
        for (const [id, o] of ref) if (t.get(id) !== o) wrong++;
        expect(wrong).toBe(0);
        expect(t.get('ord_missing')).toBeUndefined();
      }
    }
    expect(t.size).toBe(ref.size);
    let wrong = 0;
    for (const [id, o] of ref) if (t.get(id) !== o) wrong++;
    expect(wrong).toBe(0);
  });
});
