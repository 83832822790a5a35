import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pgDriver } from './pg-driver.js';

const SRC = fileURLToPath(new URL('../../', import.meta.url));

/** Every non-test TypeScript file under src/. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.spec.ts') ? [path] : [];
  });
}

describe('the PostgreSQL and Redis client libraries are loaded only when used', () => {
  it('no module of the service imports pg or ioredis as a value (a SQLite start would load them)', () => {
    const files = sources(SRC);
    expect(files.length).toBeGreaterThan(100);
    const valueImport = /^import\s+(?!type\s)[^;]*?\sfrom\s+'(pg|ioredis)'/m;
    const offenders = files
      .filter((f) => valueImport.test(readFileSync(f, 'utf8')))
      .map((f) => f.slice(SRC.length));
    expect(offenders).toEqual([]);
  });

  it('pgDriver() loads pg on first use, once', () => {
    const pg = pgDriver();
    expect(typeof pg.Client).toBe('function');
    expect(typeof pg.types.getTypeParser).toBe('function');
    expect(pgDriver()).toBe(pg);
  });
});
