import { afterAll, describe, expect, it } from '@jest/globals';
import Database from 'better-sqlite3';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { looksWhole, worldFilesIn, worldIdOfFile } from './world-files.js';

describe('world files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-world-files-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** A real SQLite file of several pages, as a world's is, closed. */
  function database(name: string, journal: 'DELETE' | 'WAL'): string {
    const file = join(dir, name);
    const db = new Database(file);
    db.pragma(`journal_mode = ${journal}`);
    db.exec('CREATE TABLE t (v TEXT)');
    const insert = db.prepare('INSERT INTO t VALUES (?)');
    for (let i = 0; i < 200; i++) insert.run('x'.repeat(500));
    db.close();
    return file;
  }

  it('names the world of a world file, its log, shared memory and partial copy; nothing else', () => {
    expect(worldIdOfFile('wld_abc123.sqlite')).toBe('wld_abc123');
    expect(worldIdOfFile('wld_abc123.sqlite-wal')).toBe('wld_abc123');
    expect(worldIdOfFile('wld_abc123.sqlite-shm')).toBe('wld_abc123');
    expect(worldIdOfFile('wld_abc123.sqlite.part')).toBe('wld_abc123');
    for (const other of ['.template.sqlite', 'wld_ABC.sqlite', 'wld_x.sqlite.bak', 'notes.txt'])
      expect(worldIdOfFile(other)).toBeNull();
    expect(worldFilesIn(join(dir, 'absent'))).toEqual([]);
  });

  it('takes a whole database (rollback journal or WAL) and refuses one cut short, empty or foreign', () => {
    const whole = database('wld_whole.sqlite', 'DELETE');
    const wal = database('wld_wal.sqlite', 'WAL');
    expect(looksWhole(whole)).toBe(true);
    expect(looksWhole(wal)).toBe(true);
    const bytes = readFileSync(whole);
    const page = bytes.readUInt16BE(16);
    const cut = (name: string, length: number): string => {
      const f = join(dir, name);
      writeFileSync(f, bytes.subarray(0, length));
      return f;
    };
    expect(looksWhole(cut('wld_half.sqlite', Math.floor(bytes.length / 2) + 7))).toBe(false);
    expect(looksWhole(cut('wld_pages.sqlite', bytes.length - page))).toBe(false); // whole pages, too few
    expect(looksWhole(cut('wld_head.sqlite', 60))).toBe(false);
    expect(looksWhole(cut('wld_empty.sqlite', 0))).toBe(false);
    expect(looksWhole(join(dir, 'wld_missing.sqlite'))).toBe(false);
    const foreign = join(dir, 'wld_foreign.sqlite');
    writeFileSync(foreign, Buffer.alloc(bytes.length, 7));
    expect(looksWhole(foreign)).toBe(false);
    expect(worldFilesIn(dir).sort()).toEqual(
      [
        'wld_empty.sqlite',
        'wld_foreign.sqlite',
        'wld_half.sqlite',
        'wld_head.sqlite',
        'wld_pages.sqlite',
        'wld_wal.sqlite',
        'wld_whole.sqlite',
      ].sort(),
    );
  });
});
