import { Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash, randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import type { WorldId } from '../../common/environment.js';
import { ConfigService } from '../../config/config.service.js';
import {
  ENGINE_DB,
  ENGINE_ENTITIES,
  ENGINE_MIGRATIONS,
  openDatabase,
  postgresOptions,
  sqliteOptions,
} from '../../database/databases.js';
import { readSeed } from '../../database/seed-files.js';
import { SeedService } from '../../database/seed.service.js';
import { worldFile } from './world-files.js';

const TEMPLATE = '.template';
/** The template's schema on PostgreSQL (never a world id: those start with wld_). */
export const WORLD_TEMPLATE_SCHEMA = 'world_template';
const TEMPLATE_SCHEMA = WORLD_TEMPLATE_SCHEMA;

/**
 * Copies every table of schema `src` into a new schema `dst` in one statement (so one
 * transaction: a schema exists whole or not at all): structure with indexes, defaults and checks,
 * rows, and a sequence of its own for each serial column, set past the copied rows. An identity
 * column (the exports' row_seq) gets its own sequence from LIKE ... INCLUDING ALL, starting at 1:
 * it is set past the copied rows too, or the world's first insert would reuse a copied number.
 * The columns are found in pg_catalog (pg_attribute, pg_attrdef), not information_schema.columns:
 * that view's per-table queries were half of a clone's time (about 450 ms to 250 ms measured).
 * A stamp, if given, is written on the new schema in the same statement (a spare, see
 * {@link WorldTemplate}).
 */
const CLONE_SCHEMA = `
DO $clone$
DECLARE
  src text := %SRC%;
  dst text := %DST%;
  stamp text := %STAMP%;
  t record;
  c record;
  seq text;
BEGIN
  EXECUTE format('CREATE SCHEMA %I', dst);
  FOR t IN SELECT r.oid, r.relname AS tablename FROM pg_class r
    JOIN pg_namespace n ON n.oid = r.relnamespace
    WHERE n.nspname = src AND r.relkind IN ('r', 'p') LOOP
    EXECUTE format('CREATE TABLE %I.%I (LIKE %I.%I INCLUDING ALL)', dst, t.tablename, src, t.tablename);
    EXECUTE format('INSERT INTO %I.%I SELECT * FROM %I.%I', dst, t.tablename, src, t.tablename);
    FOR c IN SELECT a.attname AS column_name, a.attidentity <> '' AS identity FROM pg_attribute a
      LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      WHERE a.attrelid = t.oid AND a.attnum > 0 AND NOT a.attisdropped
        AND (a.attidentity <> '' OR pg_get_expr(d.adbin, d.adrelid) LIKE 'nextval(%') LOOP
      IF c.identity THEN
        EXECUTE format('SELECT setval(pg_get_serial_sequence(%L, %L), COALESCE((SELECT MAX(%I) FROM %I.%I), 0) + 1, false)',
          format('%I.%I', dst, t.tablename), c.column_name, c.column_name, dst, t.tablename);
      ELSE
        seq := t.tablename || '_' || c.column_name || '_seq';
        EXECUTE format('CREATE SEQUENCE %I.%I OWNED BY %I.%I.%I', dst, seq, dst, t.tablename, c.column_name);
        EXECUTE format('ALTER TABLE %I.%I ALTER COLUMN %I SET DEFAULT nextval(%L)',
          dst, t.tablename, c.column_name, dst || '.' || seq);
        EXECUTE format('SELECT setval(%L, COALESCE((SELECT MAX(%I) FROM %I.%I), 0) + 1, false)',
          dst || '.' || seq, c.column_name, dst, t.tablename);
      END IF;
    END LOOP;
  END LOOP;
  IF stamp IS NOT NULL THEN
    EXECUTE format('COMMENT ON SCHEMA %I IS %L', dst, stamp);
  END IF;
END
$clone$`;

const literal = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** The statement that clones schema `src` to a new schema `dst` (stamped `stamp`, if given). */
export function cloneSchemaSql(src: string, dst: string, stamp: string | null = null): string {
  return CLONE_SCHEMA.replace('%SRC%', literal(src))
    .replace('%DST%', literal(dst))
    .replace('%STAMP%', stamp === null ? 'NULL' : literal(stamp));
}

/** The names of the template's spare copies on PostgreSQL (never a world id either). */
export const WORLD_SPARE_PREFIX = 'world_spare_';
/** Spare copies of the template a process keeps ready on PostgreSQL (see WorldTemplate). */
const SPARES_KEPT = 1;

/** A spare becomes world `id`: renamed, its stamp cleared, in one statement. */
const TAKE_SPARE = (spare: string, id: string) => `
DO $take$
BEGIN
  EXECUTE format('ALTER SCHEMA %I RENAME TO %I', ${literal(spare)}, ${literal(id)});
  EXECUTE format('COMMENT ON SCHEMA %I IS NULL', ${literal(id)});
END
$take$`;

/** A new spare's name: the prefix and random hex. */
export const newSpareName = (): string => `${WORLD_SPARE_PREFIX}${randomBytes(8).toString('hex')}`;

/**
 * What a world template built now holds, as one string: this version's engine migrations, the
 * seed files and the instant the seeds are stamped with (market times, sports start times).
 * Written on the template schema (COMMENT ON SCHEMA) once it is complete.
 */
export function worldTemplateStamp(seedInstant: number): string {
  const hash = createHash('sha256');
  hash.update(JSON.stringify(ENGINE_MIGRATIONS.map((m) => m.name)));
  for (const file of ['markets.json', 'sports.json']) hash.update(JSON.stringify(readSeed(file)));
  return `world-template ${new Date(seedInstant).toISOString()} ${hash.digest('hex')}`;
}

/**
 * Builds the world template schema (absent) on the PostgreSQL database at `url`: the engine
 * migrations, the engine seeds, then its stamp ({@link worldTemplateStamp}), last, so only a
 * complete template carries one; then `spares` spare copies of it (see {@link WorldTemplate}).
 */
export async function buildWorldTemplateSchema(
  url: string,
  seed: SeedService,
  spares = 0,
): Promise<void> {
  const ds = await openDatabase(
    postgresOptions(TEMPLATE_SCHEMA, url, ENGINE_ENTITIES, ENGINE_MIGRATIONS),
  );
  try {
    await seed.seedEngine(ds);
    const stamp = worldTemplateStamp(seed.seedInstant());
    await ds.query(`COMMENT ON SCHEMA "${TEMPLATE_SCHEMA}" IS ${literal(stamp)}`);
    for (let i = 0; i < spares; i++) {
      await ds.query(cloneSchemaSql(TEMPLATE_SCHEMA, newSpareName(), stamp));
    }
  } finally {
    await ds.destroy();
  }
}

/**
 * The migrated and seeded engine database every new world starts from, built once per process
 * (on the first create) and then copied: a copy is what makes a create take milliseconds. On
 * SQLite a file copied to DATA_DIR/worlds/<id>.sqlite; on PostgreSQL a schema cloned to a schema
 * named after the world.
 *
 * On PostgreSQL a clone is DDL for every table (about 180 ms of the server's CPU, 300-500 ms of a
 * create on a busy machine), so a spare clone of the current template (`world_spare_<hex>`,
 * stamped as the template, made whole or not at all in one statement) is kept ready beside the
 * requests: a create renames it to the world's id (one statement, milliseconds) and the next
 * spare is cloned in the background; with none ready a create clones as before. The spares of the
 * current template found at the first create are used too (a restart's, or those a database copy
 * came with); any other spare (another template's, or all of them when the template is built
 * again) is dropped then. An instance sharing the database that took a spare first makes the
 * rename fail: the create then clones.
 */
@Injectable()
export class WorldTemplate implements BeforeApplicationShutdown {
  private building: Promise<string> | null = null;
  private readonly log = new Logger('WorldTemplate');
  /** PostgreSQL: spares of the current template, ready to become a world. */
  private readonly spares: string[] = [];
  /** PostgreSQL: the stamp of the template this process copies (set once it is resolved). */
  private stamp: string | null = null;
  private replenishing: Promise<void> | null = null;
  private closing = false;

  constructor(
    private readonly config: ConfigService,
    private readonly modules: ModuleRef,
    @InjectDataSource(ENGINE_DB.test) private readonly paper: DataSource,
  ) {}

  /** Makes the engine database of a new world (its file or its schema) from the template. */
  async createWorld(id: WorldId): Promise<void> {
    if (this.config.values.databaseUrl === null) {
      await this.copyTo(worldFile(this.config.values.dataDir, id));
      return;
    }
    const template = await this.template();
    try {
      const spare = this.spares.shift();
      if (spare !== undefined) {
        try {
          await this.paper.query(TAKE_SPARE(spare, id));
          return;
        } catch (err) {
          this.log.warn(
            `spare ${spare} not taken (${err instanceof Error ? err.message : String(err)}): cloning the template`,
          );
        }
      }
      await this.paper.query(cloneSchemaSql(template, id));
    } finally {
      this.replenish(template);
    }
  }

  /** The spares in hand after the background clone under way, if any (tests). */
  async readySpares(): Promise<string[]> {
    await this.replenishing;
    return [...this.spares];
  }

  /** A background clone under way finishes before the databases close. */
  async beforeApplicationShutdown(): Promise<void> {
    this.closing = true;
    await this.replenishing;
  }

  /** Clones spares of `template` in the background, one at a time, until SPARES_KEPT are ready. */
  private replenish(template: string): void {
    const stamp = this.stamp;
    if (this.replenishing !== null || this.closing || stamp === null) return;
    if (this.spares.length >= SPARES_KEPT) return;
    this.replenishing = (async () => {
      while (!this.closing && this.spares.length < SPARES_KEPT) {
        const name = newSpareName();
        await this.paper.query(cloneSchemaSql(template, name, stamp));
        this.spares.push(name);
      }
    })()
      .catch((err: unknown) =>
        this.log.warn(
          `a spare world template copy failed: ${err instanceof Error ? err.message : String(err)}`,
        ),
      )
      .finally(() => (this.replenishing = null));
  }

  dir(): string {
    return join(this.config.values.dataDir, 'worlds');
  }

  /**
   * Copies the template to `file` (building the template first, once): to `<file>.part` first,
   * renamed into place once whole, so a process that dies mid-copy leaves only a `.part` file (a
   * boot deletes it) and never a cut-short world file under the world's name.
   */
  async copyTo(file: string): Promise<void> {
    const template = await this.template();
    const part = `${file}.part`;
    copyFileSync(template, part);
    renameSync(part, file);
  }

  /** The template (its file, or its schema on PostgreSQL), built on first use. */
  private template(): Promise<string> {
    this.building ??= (
      this.config.values.databaseUrl === null ? this.build() : this.buildSchema()
    ).catch((err: unknown) => {
      this.building = null;
      throw err;
    });
    return this.building;
  }

  /**
   * The template schema, rebuilt by each process as the file is (its migrations and seeds are
   * this version's), unless the schema there carries the stamp of exactly what this process
   * would build ({@link worldTemplateStamp}: the same migrations and seed files, seeded at the
   * same instant). A process on the wall clock seeds at an instant of its own, so it rebuilds;
   * a database copied with its template built (the e2e tests' seeded databases, on a fixed
   * clock) is not migrated and seeded again. Worlds cloned from an earlier one keep nothing of
   * it: their sequences are their own.
   */
  private async buildSchema(): Promise<string> {
    const started = Date.now();
    const seed = this.modules.get(SeedService, { strict: false });
    const rows = (await this.paper.query(
      `SELECT obj_description(oid, 'pg_namespace') AS stamp FROM pg_namespace WHERE nspname = $1`,
      [TEMPLATE_SCHEMA],
    )) as { stamp: string | null }[];
    const stamp = worldTemplateStamp(seed.seedInstant());
    const current = rows[0]?.stamp === stamp;
    if (current) {
      this.log.log('world template schema is current: used as it is');
    } else {
      await this.paper.query(`DROP SCHEMA IF EXISTS "${TEMPLATE_SCHEMA}" CASCADE`);
      await buildWorldTemplateSchema(this.config.values.databaseUrl!, seed);
      this.log.log(`world template schema built in ${Date.now() - started} ms`);
    }
    // The spares found: those of this very template kept, any other dropped.
    const found = (await this.paper.query(
      `SELECT nspname AS name, obj_description(oid, 'pg_namespace') AS stamp FROM pg_namespace
       WHERE starts_with(nspname, $1) ORDER BY nspname`,
      [WORLD_SPARE_PREFIX],
    )) as { name: string; stamp: string | null }[];
    for (const spare of found) {
      if (current && spare.stamp === stamp) this.spares.push(spare.name);
      else await this.paper.query(`DROP SCHEMA IF EXISTS "${spare.name}" CASCADE`);
    }
    this.stamp = stamp;
    return TEMPLATE_SCHEMA;
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
