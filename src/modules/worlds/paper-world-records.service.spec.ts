import { describe, expect, it } from '@jest/globals';
import type { SqlConnection } from '../../common/sql/sql-connection.js';
import { PaperWorldRecords } from './paper-world-records.service.js';

describe('PaperWorldRecords', () => {
  it('runs every cleaner, sync or async, and names each count by kind', async () => {
    const records = new PaperWorldRecords();
    records.register('watchlists', () => 2);
    records.register('comments', () => Promise.resolve(3));
    await expect(records.clear('usr_1')).resolves.toEqual({ comments: 3, watchlists: 2 });
  });

  it('refuses a kind registered twice', () => {
    const records = new PaperWorldRecords();
    records.register('comments', () => 0);
    expect(() => records.register('comments', () => 0)).toThrow(/twice/);
  });

  it('a failing cleaner fails the clear, after every other cleaner ran', async () => {
    const records = new PaperWorldRecords();
    const ran: string[] = [];
    const failure = new Error('disk I/O error');
    records.register('comments', () => {
      ran.push('comments');
      throw failure;
    });
    records.register('notifications', () => {
      ran.push('notifications');
      return Promise.reject(new Error('second failure'));
    });
    records.register('watchlists', (userId) => {
      ran.push(`watchlists of ${userId}`);
      return 1;
    });
    await expect(records.clear('usr_1')).rejects.toBe(failure);
    expect(ran).toEqual(['comments', 'notifications', 'watchlists of usr_1']);
  });

  it("stages the staged cleaners in the caller's transaction, then finishes them all, counted with the others by kind", async () => {
    const records = new PaperWorldRecords();
    const ran: string[] = [];
    const db = {} as SqlConnection;
    records.registerStaged('watchlists', (userId, world, conn) => {
      ran.push(`stage watchlists of ${userId} in ${world}${conn === db ? ' on db' : ''}`);
      return () => {
        ran.push('finish watchlists');
        return 2;
      };
    });
    records.registerStaged('exports', () => {
      ran.push('stage exports');
      return () => Promise.resolve(1);
    });
    expect(() => records.register('exports', () => 0)).toThrow(/twice/);
    const finish = records.stage('usr_1', 'test', db);
    expect(ran).toEqual(['stage exports', 'stage watchlists of usr_1 in test on db']);
    await expect(finish()).resolves.toEqual({ exports: 1, watchlists: 2 });
    expect(ran).toContain('finish watchlists');
  });
});
