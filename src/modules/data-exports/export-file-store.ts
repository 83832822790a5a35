import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { isWorldId, type WorldName } from '../../common/environment.js';
import type { ExportFormat } from './datasets.js';

/** A partial file: written under this suffix, renamed to its final name only once complete. */
const PART = '.part';

/**
 * Where export files live: `DATA_DIR/exports/<live|paper>/<id>.<csv|jsonl>`, and an ephemeral
 * world's under `DATA_DIR/exports/worlds/<wld_id>/`, a folder of its own so the world's delete
 * removes them all at once. A file is written under `<name>.part` and renamed after an fsync once
 * complete, so a file under its final name is never short, whatever a crash cuts. Only
 * {@link prepare} creates a folder: a removal never brings back a deleted world's folder.
 */
export class ExportFileStore {
  constructor(private readonly dataDir: string) {}

  dir(world: WorldName): string {
    if (isWorldId(world)) return join(this.dataDir, 'exports', 'worlds', world);
    return join(this.dataDir, 'exports', world === 'test' ? 'paper' : 'live');
  }

  /** The world's folder, made if missing, before a job writes into it. */
  prepare(world: WorldName): void {
    // The files hold users' orders and ledgers: the service user's alone, as the databases are.
    mkdirSync(this.dir(world), { recursive: true, mode: 0o700 });
  }

  path(world: WorldName, id: string, format: ExportFormat): string {
    return join(this.dir(world), `${id}.${format === 'CSV' ? 'csv' : 'jsonl'}`);
  }

  partPath(world: WorldName, id: string, format: ExportFormat): string {
    return this.path(world, id, format) + PART;
  }

  /** The complete file's size, or null when there is none. */
  size(world: WorldName, id: string, format: ExportFormat): number | null {
    try {
      return statSync(this.path(world, id, format)).size;
    } catch {
      return null;
    }
  }

  /** Deletes the export's file and any partial one. */
  remove(world: WorldName, id: string, format: ExportFormat): void {
    rmSync(this.path(world, id, format), { force: true });
    rmSync(this.partPath(world, id, format), { force: true });
  }

  /** Deletes an ephemeral world's folder with every file in it; answers how many files went. */
  removeWorld(world: WorldName): number {
    if (!isWorldId(world)) throw new Error(`only an ephemeral world's folder is removed whole`);
    const d = this.dir(world);
    if (!existsSync(d)) return 0;
    const n = readdirSync(d).length;
    rmSync(d, { recursive: true, force: true });
    return n;
  }

  /** At boot: the partial files a crash left behind (their jobs are re-queued). */
  removePartials(world: WorldName): number {
    const d = this.dir(world);
    if (!existsSync(d)) return 0;
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
  async complete(world: WorldName, id: string, format: ExportFormat): Promise<void> {
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

  async removePart(world: WorldName, id: string, format: ExportFormat): Promise<void> {
    await rm(this.partPath(world, id, format), { force: true });
  }
}
