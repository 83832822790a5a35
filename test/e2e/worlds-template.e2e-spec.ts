import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Running } from '../support/harness.js';
import { as, ORDER_SCOPES, startOrdersApp, trader, type Trader } from '../support/orders.js';
import { openDatabaseOf, testDatabaseIsPostgres } from '../support/test-database.js';
import { openWorld } from '../support/worlds-groups.js';
import { worldTemplateStamp } from '../../src/modules/worlds/world-template.service.js';

/**
 * The template a process's first world is copied from. SQLite: a file the process builds (a file
 * left from before is built again). PostgreSQL: a schema, used as it is when it carries the stamp
 * of what this process would build (the e2e tests' seeded databases come with one), built again
 * when its stamp is not current.
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
});
