// npm start builds only when dist/ is older than its sources (issue 21: it rebuilt every time).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import '../support/harness.js';

const SCRIPT = fileURLToPath(new URL('../../scripts/build-if-stale.js', import.meta.url));

describe('scripts/build-if-stale.js (npm start)', () => {
  let root: string;
  const builds = (): number => Number(readFileSync(join(root, 'builds.txt'), 'utf8'));
  const start = (): { status: number | null; out: string; ms: number } => {
    const t0 = Date.now();
    const r = spawnSync(process.execPath, [SCRIPT, root], { encoding: 'utf8' });
    return { status: r.status, out: r.stdout + r.stderr, ms: Date.now() - t0 };
  };
  /** Moves a path's modification time `s` seconds from now. */
  const touch = (path: string, s: number): void => {
    const at = new Date(Date.now() + s * 1000);
    utimesSync(path, at, at);
  };
  /** The last build as if it happened 100 s ago, so edits "50 s ago" come after it. */
  const earlier = (): void => touch(join(root, 'dist', '.build-stamp'), -100);
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'svc-start-'));
    mkdirSync(join(root, 'src', 'deep'), { recursive: true });
    writeFileSync(join(root, 'src', 'deep', 'a.ts'), 'export const a = 1;\n');
    writeFileSync(join(root, 'builds.txt'), '0');
    // A build that counts itself and fails while FAIL exists.
    const build =
      "node -e \"const fs=require('fs');if(fs.existsSync('FAIL'))process.exit(3);" +
      "fs.mkdirSync('dist',{recursive:true});fs.writeFileSync('dist/main.js','');" +
      "fs.writeFileSync('builds.txt',String(Number(fs.readFileSync('builds.txt','utf8'))+1))\"";
    writeFileSync(
      join(root, 'package.json'),
      JSON.stringify({ name: 'x', private: true, scripts: { build }, buildInputs: ['src'] }),
    );
  });
  afterAll(() => {
    rmSync(root, { recursive: true, force: true });
  });

  it('builds when there is no finished build, then not again while the sources are unchanged', () => {
    const first = start();
    expect(first.status).toBe(0);
    expect(first.out).toContain('no finished build: building');
    expect(builds()).toBe(1);
    const second = start();
    expect(second.status).toBe(0);
    expect(second.out).toContain('dist/ is current');
    expect(builds()).toBe(1);
    expect(second.ms).toBeLessThan(5_000);
  });

  it('rebuilds after a source file changes, and after one is added or removed', () => {
    earlier();
    touch(join(root, 'src', 'deep', 'a.ts'), -50);
    expect(start().out).toContain('sources changed');
    expect(builds()).toBe(2);
    earlier();
    touch(join(root, 'src', 'deep', 'a.ts'), -150);
    writeFileSync(join(root, 'src', 'deep', 'b.ts'), 'export const b = 2;\n');
    start();
    expect(builds()).toBe(3);
    earlier();
    for (const p of ['src', 'src/deep', 'src/deep/a.ts', 'src/deep/b.ts'])
      touch(join(root, p), -150);
    expect(start().out).toContain('dist/ is current');
    expect(builds()).toBe(3);
    rmSync(join(root, 'src', 'deep', 'b.ts')); // the directory's own time moves
    start();
    expect(builds()).toBe(4);
    expect(start().out).toContain('dist/ is current');
    expect(builds()).toBe(4);
  });

  it('a failed build stops the start and is tried again next time', () => {
    earlier();
    touch(join(root, 'src', 'deep', 'a.ts'), -50);
    writeFileSync(join(root, 'FAIL'), '');
    const failed = start();
    expect(failed.status).not.toBe(0);
    expect(builds()).toBe(4);
    rmSync(join(root, 'FAIL'));
    expect(start().status).toBe(0);
    expect(builds()).toBe(5);
  });
});
