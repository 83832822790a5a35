// Market titles for the panels that only have ids (positions, orders, watchlists).
import { get } from './api.js';
import type { Market, Page } from './types.js';

let markets: Promise<Map<string, Market>> | null = null;

async function fetchAll(): Promise<Map<string, Market>> {
  const all = new Map<string, Market>();
  let cursor: string | undefined;
  do {
    const page = await get<Page<Market>>('/markets', { limit: 200, cursor });
    for (const m of page.data) all.set(m.id, m);
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
  return all;
}

export function catalog(): Promise<Map<string, Market>> {
  if (markets === null) {
    markets = fetchAll();
    markets.catch(() => {
      markets = null; // try again next time
    });
  }
  return markets;
}

export async function titleOf(id: string): Promise<string> {
  try {
    return (await catalog()).get(id)?.title ?? id;
  } catch {
    return id;
  }
}
