import BetterSqlite3 from 'better-sqlite3';
import { closeSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { WorldId } from '../../common/environment.js';
import type { SqlConnection } from '../../common/sql/sql-connection.js';
import { sqliteConnection } from '../../common/sql/sqlite-dialect.js';

/**
 * The files of one world beside its database: SQLite's log and shared memory, and the partial
 * copy a create writes before renaming it into place.
 */
export const WORLD_FILE_SUFFIXES = ['', '-wal', '-shm', '.part'] as const;

/** An ephemeral world's id as the service makes it. */
const WORLD_ID = 'wld_[0-9a-z]{1,40}';
const WORLD_ID_SHAPE = new RegExp(`^${WORLD_ID}$`);

/** Whether `id` has the shape of a world id (so a lookup by it may be tried). */
export function isWorldIdShaped(id: string): boolean {
  return WORLD_ID_SHAPE.test(id);
}

/** A world's file name in DATA_DIR/worlds: `wld_<id>.sqlite`, maybe with a suffix above. */
const WORLD_FILE_NAME = new RegExp(`^(${WORLD_ID})\\.sqlite(?:-wal|-shm|\\.part)?$`);

/** The world id a file in DATA_DIR/worlds belongs to, or null (the template, anything else). */
export function worldIdOfFile(name: string): string | null {
  return WORLD_FILE_NAME.exec(name)?.[1] ?? null;
}

/** The world files in `dir` (none when it does not exist yet), by name. */
export function worldFilesIn(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return names.filter((n) => worldIdOfFile(n) !== null);
}

const MAGIC = Buffer.from('SQLite format 3\0', 'latin1');
const HEADER_BYTES = 100;

/**
 * Whether a world's database file looks whole, from its 100-byte header and its size, without
 * opening it (microseconds, so a boot checks every world): the SQLite magic, a page size that is
 * a power of two from 512 to 65536, a size that is a whole number of pages, and, when the header's
 * page count is valid (its change counter matches version-valid-for), at least that many pages.
 * A copy cut short (a crash mid-create, a disk that filled up) fails it. Not a full integrity check:
 * a damaged page inside a file of the right size passes, and is found when it is read.
 */
export function looksWhole(file: string): boolean {
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    return false;
  }
  if (size < HEADER_BYTES) return false;
  const header = Buffer.alloc(HEADER_BYTES);
  const fd = openSync(file, 'r');
  try {
    if (readSync(fd, header, 0, HEADER_BYTES, 0) !== HEADER_BYTES) return false;
  } finally {
    closeSync(fd);
  }
  if (!header.subarray(0, MAGIC.length).equals(MAGIC)) return false;
  const raw = header.readUInt16BE(16);
  const pageSize = raw === 1 ? 65_536 : raw;
  if (pageSize < 512 || (pageSize & (pageSize - 1)) !== 0) return false;
  if (size % pageSize !== 0) return false;
  const pages = header.readUInt32BE(28);
  const countValid = pages > 0 && header.readUInt32BE(24) === header.readUInt32BE(92);
  return !countValid || size >= pages * pageSize;
}

/** Where an ephemeral world's file lives: DATA_DIR/worlds/<id>.sqlite. */
export function worldFile(dataDir: string, id: WorldId): string {
  return join(dataDir, 'worlds', `${id}.sqlite`);
}

/** Opens a world file with the pragmas of every engine database (see sqliteOptions). */
export function openWorldFile(file: string): SqlConnection {
  const db = new BetterSqlite3(file, { fileMustExist: true });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  return sqliteConnection(db);
}
