import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Running } from '../support/harness.js';
import {
  as,
  limit,
  ORDER_SCOPES,
  startOrdersApp,
  TRADABLE,
  trader,
  type Trader,
} from '../support/orders.js';
import {
  openDatabaseOf,
  runWithoutBlocking,
  testDatabaseIsPostgres,
  worldStorage,
} from '../support/test-database.js';
import { openWorld } from '../support/worlds-groups.js';
import {
  cloneSchemaSql,
  WorldTemplate,
  worldTemplateStamp,
} from '../../src/modules/worlds/world-template.service.js';

/**
 * The template a process's first world is copied from. SQLite: a file the process builds (a file
 * left from before is built again). PostgreSQL: a schema, used as it is when it carries the stamp
 * of what this process would build (the e2e tests' seeded databases come with one), built again
 * when its stamp is not current. On PostgreSQL a world is a spare copy of the current template,
 * renamed, when one is ready (the tests' seeded databases come with two), and a spare is cloned
 * ahead in the background once fewer than one is left.
 */
describe('sandbox worlds: the world template', () => {
  let svc: Running | undefined;
  let a: Trader;

  afterEach(async () => {
    await svc?.close();
    svc = undefined;
  });

  const boot = async (email: string) => {
    svc = await startOrdersApp();
    a = await trader(svc, email, { scopes: ORDER_SCOPES });
    return svc;
  };
  const logged = (s: Running, text: string) => s.logs.some((l) => l.includes(text));
  /** The markets (id, title) of the paper world, or of a world by its key. */
  const markets = async (s: Running, t: Pick<Trader, 'key'>) =>
    (await as(t, `${s.api}/markets?limit=100`)).body.data.map(
      (m: { id: string; title: string }) => [m.id, m.title],
    );

  it("a boot's first world: a current template schema is copied as it is (PostgreSQL); the file is built (SQLite)", async () => {
    const s = await boot('first@template.test');
    const w = await openWorld(s, a);
    expect(await markets(s, w)).toEqual(await markets(s, a));
    if (testDatabaseIsPostgres()) {
      expect(logged(s, 'world template schema is current')).toBe(true);
      expect(logged(s, 'world template schema built')).toBe(false);
    } else {
      expect(logged(s, 'world template built')).toBe(true);
    }
  });

  it('a template left from before that is not current is built again, then stamped', async () => {
    const s = await boot('stale@template.test');
    if (testDatabaseIsPostgres()) {
      const db = openDatabaseOf(s.dataDir, 'paper');
      try {
        // What a copy of it would show if it were used.
        db.exec(`UPDATE world_template.markets SET title = 'from a stale template'`);
        db.exec(`COMMENT ON SCHEMA world_template IS 'world-template of another version'`);
      } finally {
        db.close();
      }
    } else {
      mkdirSync(join(s.dataDir, 'worlds'), { recursive: true });
      writeFileSync(join(s.dataDir, 'worlds', '.template.sqlite'), 'not a database');
    }
    const w = await openWorld(s, a);
    expect(await markets(s, w)).toEqual(await markets(s, a));
    if (testDatabaseIsPostgres()) {
      expect(logged(s, 'world template schema built')).toBe(true);
      const db = openDatabaseOf(s.dataDir, 'paper');
      try {
        const row = db
          .prepare(
            `SELECT obj_description(oid, 'pg_namespace') AS stamp FROM pg_namespace WHERE nspname = 'world_template'`,
          )
          .get() as { stamp: string };
        expect(row.stamp).toBe(worldTemplateStamp(s.clock.now()));
      } finally {
        db.close();
      }
    } else {
      expect(logged(s, 'world template built')).toBe(true);
    }
  });

  it('a world is a ready spare of the current template, renamed and unstamped; a spare of another template is dropped, never used (PostgreSQL); SQLite copies the file', async () => {
    const s = await boot('spares@template.test');
    if (!testDatabaseIsPostgres()) {
      const w = await openWorld(s, a);
      expect(await markets(s, w)).toEqual(await markets(s, a));
      // Beside the template's file, the world's own (with SQLite's companions): no spare.
      const files = readdirSync(join(s.dataDir, 'worlds')).filter((f) => !/-(wal|shm)$/.test(f));
      expect(files.sort()).toEqual(['.template.sqlite', `${w.id}.sqlite`]);
      return;
    }
    const spares = () => {
      const db = openDatabaseOf(s.dataDir, 'paper');
      try {
        return db
          .prepare(
            `SELECT nspname AS name, obj_description(oid, 'pg_namespace') AS stamp FROM pg_namespace
             WHERE nspname LIKE 'world\\_spare\\_%' ORDER BY nspname`,
          )
          .all() as { name: string; stamp: string | null }[];
      } finally {
        db.close();
      }
    };
    const stamp = worldTemplateStamp(s.clock.now());
    const ready = spares();
    expect(ready.map((r) => r.stamp)).toEqual([stamp, stamp]);
    // A spare of another template (first by name), with other markets: never a world.
    // (Over a plain client: the DO block is PostgreSQL's own SQL, not the SQLite the app writes.)
    await runWithoutBlocking(
      s.dataDir,
      'paper',
      cloneSchemaSql('world_template', 'world_spare_0stale', 'world-template of another version'),
      [],
    );
    await runWithoutBlocking(
      s.dataDir,
      'paper',
      `UPDATE world_spare_0stale.markets SET title = 'from a stale spare'`,
      [],
    );
    const w1 = await openWorld(s, a);
    expect(await markets(s, w1)).toEqual(await markets(s, a));
    const left = spares();
    // The stale spare went; one current spare became the world (the schema by its id now).
    expect(left.map((r) => r.name)).not.toContain('world_spare_0stale');
    expect(left).toHaveLength(1);
    expect(ready.map((r) => r.name)).toContain(left[0].name);
    expect(worldStorage(s.dataDir)).toEqual([w1.id]);
    const check = openDatabaseOf(s.dataDir, 'paper');
    try {
      const row = check
        .prepare(
          `SELECT obj_description(oid, 'pg_namespace') AS stamp FROM pg_namespace WHERE nspname = ?`,
        )
        .get(w1.id) as { stamp: string | null };
      expect(row.stamp).toBeNull();
    } finally {
      check.close();
    }
    // The world trades as a clone does: its sequences are its own.
    const placed = await as(w1, `${s.api}/orders`, {
      method: 'POST',
      json: limit(TRADABLE[0], 'BUY', 'YES', 2, 1),
    });
    expect(placed.status).toBe(201);
    // The last spare taken, the next one is cloned ahead: ready once the background clone ends.
    const w2 = await openWorld(s, a);
    expect(await markets(s, w2)).toEqual(await markets(s, a));
    const next = await s.app.get(WorldTemplate, { strict: false }).readySpares();
    expect(next).toHaveLength(1);
    expect(ready.map((r) => r.name)).not.toContain(next[0]);
    expect(spares()).toEqual([{ name: next[0], stamp }]);
    expect(worldStorage(s.dataDir)).toEqual([w1.id, w2.id].sort());
  });
});
