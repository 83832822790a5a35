import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lockDataDir } from './data-dir-lock.js';

describe('lockDataDir', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-lock-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('holds DATA_DIR for one service at a time, until released', () => {
    const first = lockDataDir(join(dir, 'data'));
    expect(statSync(join(dir, 'data')).mode & 0o777).toBe(0o700);
    expect(() => lockDataDir(join(dir, 'data'))).toThrow(
      /DATA_DIR is in use by another running instance of the service/,
    );
    // Another directory is another service's.
    lockDataDir(join(dir, 'other')).release();
    first.release();
    first.release(); // twice is harmless
    const again = lockDataDir(join(dir, 'data'));
    again.release();
  });

  it('a DATA_DIR it cannot create is a configuration error naming it', () => {
    writeFileSync(join(dir, 'file'), 'x');
    expect(() => lockDataDir(join(dir, 'file', 'data'))).toThrow(
      /DATA_DIR cannot be used as the data directory \(ENOTDIR/,
    );
    // Node's recursive mkdir spun for ever there.
    expect(() => lockDataDir('/proc/svc-no-such-dir')).toThrow(
      /DATA_DIR cannot be used as the data directory \(ENOENT/,
    );
  });
});
