import { describe, expect, it } from '@jest/globals';
import { DomainError } from '../errors/domain-error.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { paginate, paginateAsync, type PageRequest } from './paginate.js';

interface Row {
  time: string;
  id: string;
}

/** Rows ordered by (time, id), as a keyset query over that pair reads them. */
const rows: Row[] = Array.from({ length: 120 }, (_, i) => ({
  time: new Date(Date.UTC(2026, 10, 22, 12, 0, Math.floor(i / 2))).toISOString(),
  id: `row_${String(i).padStart(3, '0')}`,
}));

function after(keys: string[] | undefined): Row[] {
  if (keys === undefined) return rows;
  const [time, id] = keys;
  return rows.filter((r) => r.time > time || (r.time === time && r.id > id));
}

const takes: number[] = [];
function page(query: PageRequest) {
  return paginate({
    list: 'things:test',
    keys: ['time', 'id'],
    query,
    fetch: (keys, take) => {
      takes.push(take);
      return after(keys).slice(0, take);
    },
    keyOf: (r) => [r.time, r.id],
    map: (r) => r.id,
  });
}

describe('paginate', () => {
  it('shows 50 rows when no limit is asked, fetching one more to know a next page exists', () => {
    takes.length = 0;
    const first = page({});
    expect(first.data).toEqual(rows.slice(0, 50).map((r) => r.id));
    expect(takes).toEqual([51]);
    expect(first.next_cursor).not.toBeNull();
  });

  it('encodes the next cursor from the last row shown, bound to the list', () => {
    const first = page({ limit: 7 });
    expect(decodeCursor(first.next_cursor!, 'things:test', ['time', 'id'])).toEqual([
      rows[6].time,
      rows[6].id,
    ]);
    // The row a page fetched past its limit is where the next page starts, not skipped.
    expect(page({ limit: 7, cursor: first.next_cursor! }).data[0]).toBe(rows[7].id);
  });

  it('walks the whole list without a duplicate or a gap; the last page has next_cursor null', () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const p = page({ limit: 50, cursor });
      seen.push(...p.data);
      cursor = p.next_cursor ?? undefined;
      pages++;
    } while (cursor !== undefined);
    expect(pages).toBe(3);
    expect(seen).toEqual(rows.map((r) => r.id));
  });

  it('ends with next_cursor null when exactly limit rows are left', () => {
    expect(page({ limit: 120 })).toEqual({ data: rows.map((r) => r.id), next_cursor: null });
    const last = page({ limit: 60, cursor: page({ limit: 60 }).next_cursor! });
    expect(last.data).toHaveLength(60);
    expect(last.next_cursor).toBeNull();
  });

  it('refuses a cursor of another list with 400 VALIDATION_FAILED, before fetching', () => {
    takes.length = 0;
    const other = encodeCursor('others:test', [rows[3].time, rows[3].id]);
    let refused: unknown;
    try {
      page({ cursor: other });
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(DomainError);
    expect((refused as DomainError).code).toBe('VALIDATION_FAILED');
    expect((refused as DomainError).message).toMatch(/a cursor of another list/);
    expect(takes).toEqual([]);
  });

  it('pages an awaited fetch the same way', async () => {
    const p = await paginateAsync({
      list: 'things:test',
      keys: ['time', 'id'],
      query: { limit: 2 },
      fetch: (keys, take) => Promise.resolve(after(keys).slice(0, take)),
      keyOf: (r) => [r.time, r.id],
      map: (r) => ({ id: r.id }),
    });
    expect(p.data).toEqual([{ id: rows[0].id }, { id: rows[1].id }]);
    expect(decodeCursor(p.next_cursor!, 'things:test', ['time', 'id'])).toEqual([
      rows[1].time,
      rows[1].id,
    ]);
  });
});
