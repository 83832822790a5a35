import { describe, expect, it } from '@jest/globals';
import Database from 'better-sqlite3';
import { FencedError, WriterUnavailableError } from './cluster-errors.js';
import { fenceStatement, fenceSync } from './fence.js';

/**
 * The fence's synchronous form, run by a synchronous driver inside its transaction (better-
 * sqlite3 here, with the platform schema attached; pgport's port runs the same text on
 * PostgreSQL): a matching epoch passes, a stale one throws and the transaction rolls back.
 */
describe('fenceSync', () => {
  function db(): Database.Database {
    const d = new Database(':memory:');
    d.exec(`ATTACH DATABASE ':memory:' AS platform;
      CREATE TABLE platform.cluster_writers (world TEXT PRIMARY KEY, epoch BIGINT, holder TEXT, acquired_at TEXT);
      INSERT INTO platform.cluster_writers VALUES ('test', 7, 'b', '2026-11-29T23:00:00.000Z');
      CREATE TABLE orders (id TEXT)`);
    return d;
  }

  it('lets the current epoch commit, refuses an older one and rolls its writes back', () => {
    const d = db();
    const commit = (epoch: number, id: string) =>
      d.transaction(() => {
        fenceSync(d, 'test', epoch);
        d.prepare('INSERT INTO orders VALUES (?)').run(id);
      })();
    commit(7, 'ord_1');
    expect(() => commit(6, 'ord_2')).toThrow(FencedError);
    // A world with no row (never elected) is fenced too.
    expect(() => d.transaction(() => fenceSync(d, 'wld_none', 1))()).toThrow(FencedError);
    expect(d.prepare('SELECT id FROM orders').all()).toEqual([{ id: 'ord_1' }]);
  });

  it('is a 503 WRITER_UNAVAILABLE with Retry-After if it escapes', () => {
    const err = new FencedError('test', 6);
    expect(err).toBeInstanceOf(WriterUnavailableError);
    expect([err.status, err.code, err.headers['Retry-After']]).toEqual([
      503,
      'WRITER_UNAVAILABLE',
      '1',
    ]);
    expect(fenceStatement('test', 6)).toEqual({
      sql: 'UPDATE "platform".cluster_writers SET epoch = epoch WHERE world = ? AND epoch = ?',
      params: ['test', 6],
    });
  });
});
