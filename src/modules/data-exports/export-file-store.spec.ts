import { afterAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ExportFileStore } from './export-file-store.js';

describe('ExportFileStore', () => {
  const made: string[] = [];
  afterAll(() => made.forEach((d) => rmSync(d, { recursive: true, force: true })));
  const fresh = () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'export-files-'));
    made.push(dataDir);
    return { dataDir, store: new ExportFileStore(dataDir) };
  };

  it('keeps each world in its own folder: live, paper, and one per ephemeral world', () => {
    const { dataDir, store } = fresh();
    expect(store.path('live', 'dex_1', 'CSV')).toBe(join(dataDir, 'exports', 'live', 'dex_1.csv'));
    expect(store.path('test', 'dex_1', 'JSONL')).toBe(
      join(dataDir, 'exports', 'paper', 'dex_1.jsonl'),
    );
    expect(store.partPath('wld_a1', 'dex_1', 'CSV')).toBe(
      join(dataDir, 'exports', 'worlds', 'wld_a1', 'dex_1.csv.part'),
    );
  });

  it("removes a world's folder whole, and no removal brings a folder back", () => {
    const { store } = fresh();
    store.prepare('wld_a1');
    writeFileSync(store.path('wld_a1', 'dex_1', 'CSV'), 'a\n');
    writeFileSync(store.partPath('wld_a1', 'dex_2', 'JSONL'), '{}\n');
    expect(store.removeWorld('wld_a1')).toBe(2);
    expect(existsSync(store.dir('wld_a1'))).toBe(false);
    store.remove('wld_a1', 'dex_1', 'CSV');
    expect(store.size('wld_a1', 'dex_1', 'CSV')).toBeNull();
    expect(store.removePartials('wld_a1')).toBe(0);
    expect(existsSync(store.dir('wld_a1'))).toBe(false);
    expect(store.removeWorld('wld_a1')).toBe(0);
  });

  it('never removes the live or paper folder whole', () => {
    const { store } = fresh();
    expect(() => store.removeWorld('test')).toThrow();
    expect(() => store.removeWorld('live')).toThrow();
  });
});
