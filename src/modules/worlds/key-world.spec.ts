import { describe, expect, it } from '@jest/globals';
import { isPaperOnlyKey, worldOfKey } from './key-world.js';

describe('the world of a key', () => {
  it('a test key, or any key holding env:paper, is paper-only; scopes as a list or stored joined', () => {
    const cases: [Parameters<typeof isPaperOnlyKey>[0], boolean][] = [
      [{ environment: 'test', scopes: [] }, true],
      [{ environment: 'test', scopes: 'markets:read' }, true],
      [{ environment: 'live', scopes: ['markets:read', 'env:paper'] }, true],
      [{ environment: 'live', scopes: 'markets:read,env:paper' }, true],
      [{ environment: 'live', scopes: ['markets:read'] }, false],
      [{ environment: 'live', scopes: 'markets:read,env:paperish' }, false],
      [{ environment: 'live', scopes: '' }, false],
    ];
    for (const [key, paper] of cases) {
      expect(isPaperOnlyKey(key)).toBe(paper);
      expect(worldOfKey(key)).toBe(paper ? 'test' : 'live');
    }
  });
});
