import { Injectable, Logger } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { copyFileSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigService } from '../../config/config.service.js';
import {
  ENGINE_ENTITIES,
  ENGINE_MIGRATIONS,
  openDatabase,
  sqliteOptions,
} from '../../database/databases.js';
import { SeedService } from '../../database/seed.service.js';

const TEMPLATE = '.template';

/**
 * The migrated and seeded engine database every new world starts from, built once per process
 * (on the first create) and then copied: a copy is what makes a create take milliseconds.
 */
@Injectable()
export class WorldTemplate {
  private building: Promise<string> | null = null;
  private readonly log = new Logger('WorldTemplate');

  constructor(
    private readonly config: ConfigService,
    private readonly modules: ModuleRef,
  ) {}

  dir(): string {
    return join(this.config.values.dataDir, 'worlds');
  }

  /**
   * Copies the template to `file` (building the template first, once): to `<file>.part` first,
   * renamed into place once whole, so a process that dies mid-copy leaves only a `.part` file (a
   * boot deletes it) and never a cut-short world file under the world's name.
   */
  async copyTo(file: string): Promise<void> {
    this.building ??= this.build().catch((err: unknown) => {
      this.building = null;
      throw err;
    });
    const template = await this.building;
    const part = `${file}.part`;
    copyFileSync(template, part);
    renameSync(part, file);
  }

  private async build(): Promise<string> {
    const started = Date.now();
    mkdirSync(this.dir(), { recursive: true, mode: 0o700 });
    const file = join(this.dir(), `${TEMPLATE}.sqlite`);
    // Rebuilt by each process: its migrations and seeds are this version's.
    for (const f of [file, `${file}-wal`, `${file}-shm`]) rmSync(f, { force: true });
    const ds = await openDatabase(
      sqliteOptions(TEMPLATE, this.dir(), ENGINE_ENTITIES, ENGINE_MIGRATIONS),
    );
    try {
      await this.modules.get(SeedService, { strict: false }).seedEngine(ds);
      // One self-contained file to copy: the log folded in, no -wal beside it.
      await ds.query('PRAGMA wal_checkpoint(TRUNCATE)');
      await ds.query('PRAGMA journal_mode = DELETE');
    } finally {
      await ds.destroy();
    }
    this.log.log(`world template built in ${Date.now() - started} ms`);
    return file;
  }
}
