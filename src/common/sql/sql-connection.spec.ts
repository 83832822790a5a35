import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import BetterSqlite3 from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServices, type Services } from '../../../test/support/services.js';
import { isUniqueViolation } from '../../database/databases.js';
import { PgSyncBridge } from './pg-sync-bridge.js';
import { PgSyncConnection } from './pg-sync-connection.js';
import {
  dialectOf,
  queryDeferred,
  runDeferred,
  type DeferredRun,
  type SqlConnection,
} from './sql-connection.js';
import { sqliteConnection } from './sqlite-dialect.js';

/**
 * The port's conformance: one body of cases run on better-sqlite3 (a file in a temp dir) and on
 * PgSyncConnection (a throwaway PostgreSQL cluster, one for the file), which must answer alike.
 */
let services: Services;
const dir = mkdtempSync(join(tmpdir(), 'svc-sql-port-'));

beforeAll(async () => {
  services = await startServices();
}, 120_000);

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await services?.stop();
}, 60_000);

const ENGINES = [
  {
    dialect: 'sqlite',
    open: (): SqlConnection => sqliteConnection(new BetterSqlite3(join(dir, 'port.sqlite'))),
  },
  {
    dialect: 'postgres',
    open: (): SqlConnection => {
      const admin = new PgSyncConnection(services.databaseUrl);
      admin.exec('CREATE SCHEMA IF NOT EXISTS port');
      admin.close();
      return new PgSyncConnection(services.databaseUrl, 'port');
    },
  },
] as const;

describe.each(ENGINES)('SqlConnection on $dialect', ({ dialect, open }) => {
  let db: SqlConnection;

  beforeAll(() => {
    db = open();
    db.exec(
      `CREATE TABLE items (id TEXT PRIMARY KEY, n INTEGER NOT NULL, big BIGINT, note TEXT);
       CREATE TABLE tags (item_id TEXT NOT NULL, tag TEXT NOT NULL, UNIQUE (item_id, tag))`,
    );
  });
  afterAll(() => {
    db.close();
  });

  const reset = () => db.exec('DELETE FROM items; DELETE FROM tags');
  const count = () => (db.prepare('SELECT COUNT(*) AS c FROM items').get() as { c: number }).c;

  it('says which engine it is', () => {
    expect(dialectOf(db)).toBe(dialect);
  });

  it('run reports the rows changed; get and all read them with their column names', () => {
    reset();
    const insert = db.prepare('INSERT INTO items (id, n, big, note) VALUES (?, ?, ?, ?)');
    expect(insert.run('a', 1, null, 'x')).toMatchObject({ changes: 1 });
    expect(insert.run('b', 2, 7, null).changes).toBe(1);
    expect(db.prepare('UPDATE items SET n = n + 10').run().changes).toBe(2);
    expect(db.prepare('DELETE FROM items WHERE id = ?').run('zz').changes).toBe(0);
    expect(db.prepare('SELECT id, n, big, note FROM items WHERE id = ?').get('a')).toEqual({
      id: 'a',
      n: 11,
      big: null,
      note: 'x',
    });
    expect(db.prepare('SELECT id FROM items WHERE id = ?').get('none')).toBeUndefined();
    expect(db.prepare('SELECT id FROM items WHERE n > ?').all(100)).toEqual([]);
    expect(
      db
        .prepare<[], { id: string; total: number }>('SELECT id, n AS total FROM items ORDER BY id')
        .all(),
    ).toEqual([
      { id: 'a', total: 11 },
      { id: 'b', total: 12 },
    ]);
  });

  it('binds positional ? and named @x, :x and $x parameters (a name used twice is one value)', () => {
    reset();
    db.prepare('INSERT INTO items (id, n) VALUES (@id, @n)').run({ id: 'p', n: 5 });
    db.prepare('INSERT INTO items (id, n) VALUES (:id, :n)').run({ id: 'q', n: 6 });
    db.prepare('INSERT INTO items (id, n) VALUES ($id, $n)').run({ id: 'r', n: 7 });
    const twice = db.prepare('SELECT id FROM items WHERE n >= @lo AND n < @lo + 2 ORDER BY id');
    expect(twice.all({ lo: 5 })).toEqual([{ id: 'p' }, { id: 'q' }]);
    const positional = db.prepare('SELECT id FROM items WHERE n BETWEEN ? AND ? ORDER BY id');
    expect(positional.all(6, 7)).toEqual([{ id: 'q' }, { id: 'r' }]);
    expect(positional.all([6, 7])).toEqual([{ id: 'q' }, { id: 'r' }]);
  });

  it('raw(true) answers rows as arrays in column order', () => {
    reset();
    db.prepare('INSERT INTO items (id, n) VALUES (?, ?)').run('a', 1);
    expect(db.prepare('SELECT id, n FROM items').raw(true).all()).toEqual([['a', 1]]);
  });

  it('keeps integers as numbers: counts, sums and 64-bit columns up to 2^53', () => {
    reset();
    const max = Number.MAX_SAFE_INTEGER;
    db.prepare('INSERT INTO items (id, n, big) VALUES (?, ?, ?)').run('a', 2_000_000_000, max);
    db.prepare('INSERT INTO items (id, n, big) VALUES (?, ?, ?)').run('b', 1, -5);
    expect(db.prepare('SELECT big FROM items WHERE id = ?').get('a')).toEqual({ big: max });
    expect(db.prepare('SELECT COUNT(*) AS c, SUM(n) AS s, MAX(big) AS m FROM items').get()).toEqual(
      { c: 2, s: 2_000_000_001, m: max },
    );
  });

  it('binds and reads null', () => {
    reset();
    db.prepare('INSERT INTO items (id, n, note) VALUES (?, ?, ?)').run('a', 1, null);
    expect(db.prepare('SELECT id FROM items WHERE note IS NULL').all()).toEqual([{ id: 'a' }]);
    expect(db.prepare('SELECT note, big FROM items').get()).toEqual({ note: null, big: null });
  });

  it('commits a transaction when its function returns, with its value', () => {
    reset();
    const tx = db.transaction((id: string) => {
      expect(db.inTransaction).toBe(true);
      db.prepare('INSERT INTO items (id, n) VALUES (?, 1)').run(id);
      return 'done';
    });
    expect(tx('a')).toBe('done');
    expect(db.inTransaction).toBe(false);
    expect(count()).toBe(1);
  });

  it('rolls the whole transaction back when its function throws', () => {
    reset();
    const tx = db.transaction(() => {
      db.prepare('INSERT INTO items (id, n) VALUES (?, 1)').run('a');
      throw new Error('boom');
    });
    expect(() => tx()).toThrow('boom');
    expect(db.inTransaction).toBe(false);
    expect(count()).toBe(0);
  });

  it('runs a nested transaction as a savepoint: an inner failure undoes only the inner part', () => {
    reset();
    const insert = db.prepare('INSERT INTO items (id, n) VALUES (?, 1)');
    const inner = db.transaction((id: string) => {
      insert.run(id);
      throw new Error('inner');
    });
    db.transaction(() => {
      insert.run('outer');
      expect(() => inner('inner')).toThrow('inner');
      insert.run('after');
      db.transaction(() => insert.run('nested-ok'))();
    })();
    expect(db.prepare('SELECT id FROM items ORDER BY id').all()).toEqual([
      { id: 'after' },
      { id: 'nested-ok' },
      { id: 'outer' },
    ]);
    // An outer failure undoes the committed savepoints inside it too.
    expect(() =>
      db.transaction(() => {
        db.transaction(() => insert.run('gone'))();
        throw new Error('outer');
      })(),
    ).toThrow('outer');
    expect(count()).toBe(3);
  });

  it('reports a unique violation as one isUniqueViolation recognises, and rolls back', () => {
    reset();
    const tag = db.prepare('INSERT INTO tags (item_id, tag) VALUES (?, ?)');
    tag.run('a', 'x');
    let caught: unknown;
    try {
      tag.run('a', 'x');
    } catch (err) {
      caught = err;
    }
    expect(isUniqueViolation(caught)).toBe(true);
    expect(() =>
      db.transaction(() => {
        tag.run('b', 'y');
        tag.run('a', 'x');
      })(),
    ).toThrow();
    expect(db.prepare('SELECT item_id FROM tags ORDER BY item_id').all()).toEqual([
      { item_id: 'a' },
    ]);
  });

  it('keeps working after a failed statement, inside or outside a transaction', () => {
    reset();
    expect(() => db.prepare('SELECT nope FROM items').all()).toThrow();
    expect(() =>
      db.transaction(() => {
        db.prepare('INSERT INTO items (id, n) VALUES (?, 1)').run('a');
        db.prepare('INSERT INTO items (id, n) VALUES (?, NULL)').run('b');
      })(),
    ).toThrow();
    expect(db.inTransaction).toBe(false);
    db.prepare('INSERT INTO items (id, n) VALUES (?, 1)').run('c');
    expect(db.prepare('SELECT id FROM items').all()).toEqual([{ id: 'c' }]);
  });

  it('runs exec inside a transaction: rolled back with it', () => {
    reset();
    expect(() =>
      db.transaction(() => {
        db.exec("INSERT INTO items (id, n) VALUES ('e', 1)");
        throw new Error('undo');
      })(),
    ).toThrow('undo');
    expect(count()).toBe(0);
  });

  it('deferred writes commit with their transaction, in order, odd values intact', () => {
    reset();
    const insert = db.prepare('INSERT INTO items (id, n, big, note) VALUES (?, ?, ?, ?)');
    const bump = db.prepare('UPDATE items SET n = n - ? -- $1 in a comment\n WHERE id = ?');
    const odd = "it's -- not; a $1 \\ comment";
    db.transaction(() => {
      runDeferred(insert, 'a', -5, 2 ** 40, odd);
      runDeferred(insert, 'b', 1, null, null);
      runDeferred(bump, -3, 'a');
      // A read in the transaction sees the deferred writes before it.
      expect(db.prepare('SELECT n FROM items WHERE id = ?').get('a')).toEqual({ n: -2 });
      runDeferred(db.prepare('DELETE FROM items WHERE id = ?'), 'b');
    })();
    expect(db.prepare('SELECT id, n, big, note FROM items').all()).toEqual([
      { id: 'a', n: -2, big: 2 ** 40, note: odd },
    ]);
    // Outside a transaction it runs at once.
    runDeferred(insert, 'c', 3, null, null);
    expect(count()).toBe(2);
  });

  it("a deferred statement's count and rows are known once its round trip has answered", () => {
    reset();
    const insert = db.prepare('INSERT INTO items (id, n) VALUES (?, ?)');
    const rows = db.prepare('SELECT id, n FROM items WHERE n > ? ORDER BY id');
    let inserted: DeferredRun[] = [];
    let read: DeferredRun | undefined;
    let gone: DeferredRun | undefined;
    db.transaction(() => {
      inserted = [runDeferred(insert, 'a', 1), runDeferred(insert, 'b', 2)];
      read = queryDeferred(rows, 1);
      gone = runDeferred(db.prepare('DELETE FROM items WHERE n < ?'), 5);
      // Not sent yet on PostgreSQL: reading a result now is a mistake, and says so.
      if (dialect === 'postgres') expect(() => gone!.changes).toThrow(/before it was sent/);
    })();
    expect(inserted.map((r) => r.changes)).toEqual([1, 1]);
    expect(read!.rows).toEqual([{ id: 'b', n: 2 }]);
    expect(gone!.changes).toBe(2);
    expect(count()).toBe(0);
  });

  it('a failing deferred write fails its transaction and rolls all of it back', () => {
    reset();
    const tag = db.prepare('INSERT INTO tags (item_id, tag) VALUES (?, ?)');
    const insert = db.prepare('INSERT INTO items (id, n) VALUES (?, ?)');
    let caught: unknown;
    try {
      db.transaction(() => {
        insert.run('a', 1);
        runDeferred(tag, 'a', 'x');
        runDeferred(tag, 'a', 'x');
      })();
    } catch (err) {
      caught = err;
    }
    expect(isUniqueViolation(caught)).toBe(true);
    expect(db.inTransaction).toBe(false);
    expect(count()).toBe(0);
    expect(db.prepare('SELECT COUNT(*) AS c FROM tags').get()).toEqual({ c: 0 });
    // In a savepoint: only the inner part is undone, the outer transaction goes on.
    db.transaction(() => {
      insert.run('outer', 1);
      expect(() =>
        db.transaction(() => {
          runDeferred(tag, 'b', 'y');
          runDeferred(tag, 'b', 'y');
        })(),
      ).toThrow();
      runDeferred(insert, 'after', 2);
    })();
    expect(db.prepare('SELECT id FROM items ORDER BY id').all()).toEqual([
      { id: 'after' },
      { id: 'outer' },
    ]);
    expect(db.prepare('SELECT COUNT(*) AS c FROM tags').get()).toEqual({ c: 0 });
    // A transaction that throws drops its deferred writes.
    expect(() =>
      db.transaction(() => {
        runDeferred(insert, 'dropped', 3);
        throw new Error('boom');
      })(),
    ).toThrow('boom');
    expect(count()).toBe(2);
  });

  it('refuses a transaction function that returns a promise, leaving nothing written', () => {
    reset();
    const tx = db.transaction(async () => {
      db.prepare('INSERT INTO items (id, n) VALUES (?, 1)').run('a');
    });
    expect(() => tx()).toThrow(TypeError);
    expect(count()).toBe(0);
  });
});

describe('PgSyncConnection only', () => {
  it('refuses a 64-bit integer beyond 2^53 rather than round it', () => {
    const db = new PgSyncConnection(services.databaseUrl);
    try {
      expect(() => db.prepare('SELECT 9007199254740993::bigint AS x').get()).toThrow(/2\^53/);
      expect(db.prepare('SELECT 9007199254740991::bigint AS x').get()).toEqual({
        x: 9007199254740991,
      });
    } finally {
      db.close();
    }
  });

  it('sends a transaction of deferred writes in one round trip, its BEGIN and COMMIT included', () => {
    const db = new PgSyncConnection(services.databaseUrl, 'port');
    const bridge = PgSyncBridge.instance();
    const call = bridge.call.bind(bridge);
    let trips = 0;
    bridge.call = (...args) => {
      trips++;
      return call(...args);
    };
    try {
      db.exec('DELETE FROM items');
      trips = 0;
      const insert = db.prepare('INSERT INTO items (id, n) VALUES (?, ?)');
      db.transaction(() => {
        for (let i = 0; i < 50; i++) runDeferred(insert, `d${i}`, i);
      })();
      expect(trips).toBe(1);
      expect(db.prepare('SELECT COUNT(*) AS c FROM items').get()).toEqual({ c: 50 });
    } finally {
      bridge.call = call;
      db.close();
    }
  });

  it('opens without blocking: its first statement waits for the connection, or fails with why it could not connect', () => {
    const bridge = PgSyncBridge.instance();
    const call = bridge.call.bind(bridge);
    const blocking: string[] = [];
    bridge.call = (request, sql) => {
      blocking.push(request.op);
      return call(request, sql);
    };
    try {
      const missing = new URL(services.databaseUrl);
      missing.pathname = '/no_such_database';
      const broken = new PgSyncConnection(missing.toString(), 'port');
      const db = new PgSyncConnection(services.databaseUrl, 'port');
      expect(blocking).toEqual([]);
      let failure: unknown;
      try {
        broken.prepare('SELECT 1 AS one').get();
      } catch (err) {
        failure = err;
      }
      // PostgreSQL's invalid_catalog_name, as a constructor that waited used to throw.
      expect(failure).toMatchObject({ code: '3D000' });
      expect(db.prepare('SELECT 1 AS one').get()).toEqual({ one: 1 });
      broken.close();
      db.close();
      expect(blocking).toEqual(['query', 'query', 'close', 'close']);
    } finally {
      bridge.call = call;
    }
  });

  it('answers an async batch beside synchronous calls, in one transaction', async () => {
    const db = new PgSyncConnection(services.databaseUrl, 'port');
    try {
      db.exec('DELETE FROM items');
      const batch = db.submit([
        { sql: 'INSERT INTO items (id, n) VALUES (?, ?)', params: ['x', 1] },
        { sql: 'INSERT INTO items (id, n) VALUES (@id, @n)', params: { id: 'y', n: 2 } },
      ]);
      // A synchronous call made while the batch is in flight waits its turn and sees it.
      expect(db.prepare('SELECT COUNT(*) AS c FROM items').get()).toEqual({ c: 2 });
      expect(await batch).toEqual([{ changes: 1 }, { changes: 1 }]);
      await expect(
        db.submit([
          { sql: 'INSERT INTO items (id, n) VALUES (?, ?)', params: ['z', 3] },
          { sql: 'INSERT INTO items (id, n) VALUES (?, ?)', params: ['x', 4] },
        ]),
      ).rejects.toMatchObject({ code: '23505' });
      expect(db.prepare('SELECT COUNT(*) AS c FROM items').get()).toEqual({ c: 2 });
    } finally {
      db.close();
    }
  });
});
