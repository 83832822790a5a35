import { describe, expect, it } from '@jest/globals';
import { KeyedSerializer } from './keyed-serializer.js';

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('KeyedSerializer', () => {
  it('runs sections of one key one at a time, in call order; other keys run alongside', async () => {
    const s = new KeyedSerializer();
    const log: string[] = [];
    const section = (name: string) => async () => {
      log.push(`${name}:start`);
      await tick();
      await tick();
      log.push(`${name}:end`);
      return name;
    };
    const results = await Promise.all([
      s.run('u1', section('a')),
      s.run('u1', section('b')),
      s.run('u2', section('c')),
    ]);
    expect(results).toEqual(['a', 'b', 'c']);
    expect(log.indexOf('a:end')).toBeLessThan(log.indexOf('b:start'));
    expect(log.indexOf('c:start')).toBeLessThan(log.indexOf('a:end'));
  });

  it('a failing section rejects its own caller only, and the next one still runs', async () => {
    const s = new KeyedSerializer();
    const failed = s.run('k', () => Promise.reject(new Error('boom')));
    const next = s.run('k', () => Promise.resolve(42));
    await expect(failed).rejects.toThrow('boom');
    await expect(next).resolves.toBe(42);
    await tick();
    expect(s.size).toBe(0);
  });
});
