import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { http, startApp } from '../support/harness.js';
import {
  book,
  cancel,
  getOrder,
  levelAt,
  limit,
  place,
  startOrdersApp,
  trader,
  TRADABLE,
  type Trader,
} from '../support/orders.js';
import { SEED_EVENTS, SPORTS_SEED_MARKETS } from '../support/sports.js';
import { openDatabaseOf, testDatabaseIsPostgres } from '../support/test-database.js';

/** seeds/markets.json, plus the own market of each seeded sports event. */
const SEEDED_MARKETS =
  (
    JSON.parse(
      readFileSync(new URL('../../seeds/markets.json', import.meta.url), 'utf8'),
    ) as unknown[]
  ).length + SPORTS_SEED_MARKETS;
const SEEDED_ACCOUNTS = [
  'admin@sandbox.test',
  'responder@sandbox.test',
  'trader@sandbox.test',
  'unverified@sandbox.test',
];

/**
 * Reads one database of DATA_DIR directly, read-only, outside the app: its file (SQLite) or its
 * schema (PostgreSQL).
 */
function query<T>([dataDir, name]: readonly [string, string], sql: string): T[] {
  const db = openDatabaseOf(dataDir, name, { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).all() as T[];
  } finally {
    db.close();
  }
}

async function listAll(api: string): Promise<{ id: string; slug: string }[]> {
  const res = await http(`${api}/markets?limit=200`);
  expect(res.status).toBe(200);
  expect(res.body.next_cursor).toBeNull();
  return res.body.data;
}

describe('persistence across restarts', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-persist-'));
  afterAll(() => {
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps all data, does not duplicate seeds, and builds the schema by migrations', async () => {
    expect(SEEDED_MARKETS).toBeGreaterThanOrEqual(24);

    const first = await startApp({ dataDir });
    const before = await listAll(first.api);
    expect(before).toHaveLength(SEEDED_MARKETS);
    const oneId = before[0].id;
    await first.close({ keepData: true });

    // Three separate databases (SQLite files, or PostgreSQL schemas), each with its own
    // migrations table.
    const platform = [dataDir, 'platform'] as const;
    const live = [dataDir, 'live'] as const;
    const paper = [dataDir, 'paper'] as const;
    const usersBefore = query<{ id: string; email: string }>(
      platform,
      'SELECT id, email FROM users',
    );
    expect(usersBefore.map((u) => u.email).sort()).toEqual(SEEDED_ACCOUNTS);
    const migrationsBefore = {
      platform: query<{ name: string }>(platform, 'SELECT name FROM migrations ORDER BY id'),
      live: query<{ name: string }>(live, 'SELECT name FROM migrations ORDER BY id'),
      paper: query<{ name: string }>(paper, 'SELECT name FROM migrations ORDER BY id'),
    };
    expect(migrationsBefore.platform.map((m) => m.name)).toContain('PlatformInit1763769600000');
    expect(migrationsBefore.live.map((m) => m.name)).toContain('EngineInit1763769600001');
    expect(migrationsBefore.paper.map((m) => m.name)).toContain('EngineInit1763769600001');
    // A SQLite file in WAL mode (PostgreSQL has its own write-ahead log, not a per-database mode).
    for (const file of testDatabaseIsPostgres() ? [] : [platform, live, paper]) {
      expect(query<{ journal_mode: string }>(file, 'PRAGMA journal_mode')[0].journal_mode).toBe(
        'wal',
      );
    }

    // Second start on the same directory.
    const second = await startApp({ dataDir });
    try {
      const after = await listAll(second.api);
      expect(after).toEqual(before);
      const one = await http(`${second.api}/markets/${oneId}`);
      expect(one.status).toBe(200);
      expect(one.body.id).toBe(oneId);
    } finally {
      await second.close({ keepData: true });
    }

    // Nothing was seeded twice, nothing re-created, no migration ran again.
    expect(query<{ n: number }>(platform, 'SELECT COUNT(*) AS n FROM users')[0].n).toBe(4);
    expect(query<{ id: string; email: string }>(platform, 'SELECT id, email FROM users')).toEqual(
      usersBefore,
    );
    expect(query<{ n: number }>(live, 'SELECT COUNT(*) AS n FROM markets')[0].n).toBe(
      SEEDED_MARKETS,
    );
    expect(query<{ n: number }>(paper, 'SELECT COUNT(*) AS n FROM markets')[0].n).toBe(
      SEEDED_MARKETS,
    );
    for (const file of [live, paper]) {
      expect(query<{ n: number }>(file, 'SELECT COUNT(*) AS n FROM sports_events')[0].n).toBe(
        SEED_EVENTS.length,
      );
    }
    expect({
      platform: query<{ name: string }>(platform, 'SELECT name FROM migrations ORDER BY id'),
      live: query<{ name: string }>(live, 'SELECT name FROM migrations ORDER BY id'),
      paper: query<{ name: string }>(paper, 'SELECT name FROM migrations ORDER BY id'),
    }).toEqual(migrationsBefore);
  });

  it("restores each engine from the database once at boot (in cluster mode the term's restore), with every committed resting order in its book", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-persist-restore-'));
    try {
      const m = TRADABLE[0];
      const first = await startOrdersApp({ dataDir: dir });
      let t: Trader;
      let placed: { id: string }[];
      try {
        t = await trader(first);
        placed = [
          await place(first, t, limit(m, 'BUY', 'YES', m.reference - 10, 7)),
          await place(first, t, limit(m, 'BUY', 'YES', m.reference - 12, 4)),
        ];
      } finally {
        await first.close({ keepData: true });
      }
      const second = await startOrdersApp({ dataDir: dir });
      try {
        const lines = second.logs;
        const count = (what: string) => lines.filter((l) => l.includes(what)).length;
        // Each engine is read from the database once at boot: the first read of a cluster-mode
        // boot is the writer term's (after the epoch increment), not one before it as well.
        expect([count('live engine restored'), count('test engine restored')]).toEqual([1, 1]);
        const clustered = count('campaigning for live and test') === 1;
        expect(clustered).toBe(testDatabaseIsPostgres());
        if (clustered) {
          const term = lines.findIndex((l) => l.includes('writer of test (epoch'));
          expect(term).toBeGreaterThanOrEqual(0);
          expect(lines.findIndex((l) => l.includes('test engine restored'))).toBeGreaterThan(term);
        }
        // The engine holds both orders: in the book, and cancellable (the engine knows them).
        const bk = await book(second, t, m.id);
        expect([levelAt(bk.bids, m.reference - 10), levelAt(bk.bids, m.reference - 12)]).toEqual([
          7, 4,
        ]);
        for (const o of placed) expect((await getOrder(second, t, o.id)).status).toBe('OPEN');
        const cancelled = await cancel(second, t, placed[0].id);
        expect(cancelled.status).toBe(200);
        expect(levelAt((await book(second, t, m.id)).bids, m.reference - 10)).toBe(0);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the live and paper worlds are separate databases: changing one leaves the other alone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-persist-'));
    const svc = await startApp({ dataDir: dir });
    try {
      const db = openDatabaseOf(dir, 'paper');
      db.prepare('DELETE FROM markets').run();
      db.close();
      // The anonymous list reads the live engine, which still has every market.
      expect(await listAll(svc.api)).toHaveLength(SEEDED_MARKETS);
    } finally {
      await svc.close();
    }
  });
});
