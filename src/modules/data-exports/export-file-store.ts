import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Environment } from '../../common/environment.js';
import type { ExportFormat } from './datasets.js';

/** A partial file: written under this suffix, renamed to its final name only once complete. */
const PART = '.part';

/**
 * Where export files live: `DATA_DIR/exports/<world>/<id>.<csv|jsonl>`. A file is written under
 * `<name>.part` and renamed after an fsync once complete, so a file under its final name is never
 * short, whatever a crash cuts.
 */
export class ExportFileStore {
  constructor(private readonly dataDir: string) {}

  dir(world: Environment): string {
    const d = join(this.dataDir, 'exports', world === 'test' ? 'paper' : 'live');
    // The files hold users' orders and ledgers: the service user's alone, as the databases are.
    mkdirSync(d, { recursive: true, mode: 0o700 });
    return d;
  }

  path(world: Environment, id: string, format: ExportFormat): string {
    return join(this.dir(world), `${id}.${format === 'CSV' ? 'csv' : 'jsonl'}`);
  }

  partPath(world: Environment, id: string, format: ExportFormat): string {
    return this.path(world, id, format) + PART;
  }

  /** The complete file's size, or null when there is none. */
  size(world: Environment, id: string, format: ExportFormat): number | null {
    try {
      return statSync(this.path(world, id, format)).size;
    } catch {
      return null;
    }
  }

  /** Deletes the export's file and any partial one. */
  remove(world: Environment, id: string, format: ExportFormat): void {
    rmSync(this.path(world, id, format), { force: true });
    rmSync(this.partPath(world, id, format), { force: true });
  }

  /** At boot: the partial files a crash left behind (their jobs are re-queued). */
  removePartials(world: Environment): number {
    const d = this.dir(world);
    let n = 0;
    for (const name of readdirSync(d)) {
      if (name.endsWith(PART)) {
        rmSync(join(d, name), { force: true });
        n++;
      }
    }
    return n;
  }

  /** Flushes a finished partial file to disk, then gives it its final name. */
  async complete(world: Environment, id: string, format: ExportFormat): Promise<void> {
    const part = this.partPath(world, id, format);
    const fh = await open(part, 'r+');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(part, this.path(world, id, format));
    // The rename itself is made durable by syncing the directory.
    const dh = await open(this.dir(world), 'r');
    try {
      await dh.sync();
    } catch {
      // Some file systems refuse fsync on a directory; the rename still happened.
    } finally {
      await dh.close();
    }
  }

  async removePart(world: Environment, id: string, format: ExportFormat): Promise<void> {
    await rm(this.partPath(world, id, format), { force: true });
  }
}
