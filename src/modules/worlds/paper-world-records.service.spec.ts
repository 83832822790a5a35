import { describe, expect, it } from '@jest/globals';
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
});
