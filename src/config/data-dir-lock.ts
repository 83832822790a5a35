import Database from 'better-sqlite3';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ConfigError } from './app-config.js';

/** The lock a running service holds on its DATA_DIR, released when it closes. */
export interface DataDirLock {
  release(): void;
}

const LOCK_FILE = 'service.lock';

/**
 * Creates DATA_DIR if needed and takes it for this process: two processes on one DATA_DIR each
 * keep their own engine in memory over the same databases, so each reserves the same money and
 * balances go wrong. The lock is an exclusive SQLite lock on DATA_DIR/service.lock, held until
 * {@link DataDirLock.release}: the operating system drops it when the process dies, so a crash
 * (kill -9) leaves nothing to clean up. A second process, or a second app in one process, is
 * refused as a configuration error (exit 78); so is a directory it cannot write.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  try {
    // A directory it creates is the service user's alone (databases, secrets). Its parents are
    // made only when missing: Node's recursive mkdir spins for ever under /proc.
    if (!existsSync(dataDir)) {
      if (existsSync(dirname(dataDir))) mkdirSync(dataDir, { mode: 0o700 });
      else mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    }
  } catch (err) {
    throw new ConfigError(
      'DATA_DIR',
      `cannot be used as the data directory (${(err as NodeJS.ErrnoException).code ?? 'error'}: ${dataDir})`,
    );
  }
  let db: Database.Database | null = null;
  try {
    db = new Database(join(dataDir, LOCK_FILE), { timeout: 0 });
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
  } catch (err) {
    db?.close();
    const code = (err as { code?: string }).code ?? 'error';
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') {
      throw new ConfigError(
        'DATA_DIR',
        `is in use by another running instance of the service (${dataDir}): stop it first, or give this one its own DATA_DIR`,
      );
    }
    throw new ConfigError(
      'DATA_DIR',
      `cannot be written (${code}: ${dataDir}): the service keeps its databases and secrets there`,
    );
  }
  const held = db;
  let released = false;
  return {
    release(): void {
      if (released) return;
      released = true;
      held.close();
    },
  };
}
