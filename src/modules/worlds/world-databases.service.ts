import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import {
  isWorldId,
  type Environment,
  type WorldId,
  type WorldName,
} from '../../common/environment.js';
import { DomainError } from '../../common/errors/domain-error.js';
import { connectionOf, ENGINE_DB } from '../../database/databases.js';
import type { SqlConnection } from '../../common/sql/sql-connection.js';
import { WorldScoped } from './world-scoped.js';
import { WorldStorage } from './world-storage.js';

/**
 * The database of each world (its engine database): where the records of the world-scoped groups
 * live, beside the world's orders and positions, so a world's data stays in its own file. The
 * live and paper databases are TypeORM data sources opened at boot; an ephemeral world's file is
 * opened on its first request (plain better-sqlite3: its schema came with the template) and
 * closed when it is unloaded, after every holder of per-world state has dropped its part.
 */
@Injectable()
export class WorldDatabases implements OnModuleDestroy {
  private readonly sources: Record<Environment, DataSource>;
  private readonly loaded = new Map<WorldId, { db: SqlConnection; touchedAt: number }>();
  private readonly unloadHooks: ((world: WorldId) => void)[] = [];
  private readonly loadHooks: ((world: WorldId) => void)[] = [];
  private readonly log = new Logger('Worlds');
  /** Set by the world registry: whether a world may be opened (READY, not deleting). */
  private openable: (world: WorldId) => boolean = () => true;

  constructor(
    @InjectDataSource(ENGINE_DB.live) live: DataSource,
    @InjectDataSource(ENGINE_DB.test) paper: DataSource,
    private readonly storage: WorldStorage,
  ) {
    this.sources = { live, test: paper };
  }

  /** The TypeORM data source of the live or paper world (ephemeral worlds have none). */
  dataSource(world: Environment): DataSource {
    return this.sources[world];
  }

  /** The better-sqlite3 connection, for prepared statements; an ephemeral world loads on demand. */
  connection(world: WorldName): SqlConnection {
    if (!isWorldId(world)) return connectionOf(this.sources[world]);
    const hit = this.loaded.get(world);
    if (hit !== undefined) {
      hit.touchedAt = Date.now();
      return hit.db;
    }
    const db = this.openable(world) ? this.storage.open(world) : null;
    if (db === null) {
      throw new DomainError('NOT_FOUND', `World ${world} no longer exists`, { world_id: world });
    }
    this.loaded.set(world, { db, touchedAt: Date.now() });
    for (const hook of this.loadHooks) {
      try {
        hook(world);
      } catch (err) {
        this.log.warn(`loading ${world}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    return db;
  }

  isLoaded(world: WorldId): boolean {
    return this.loaded.has(world);
  }

  loadedWorlds(): WorldId[] {
    return [...this.loaded.keys()];
  }

  /** Marks a world used now (a request reached it), so the idle sweep leaves it loaded. */
  touch(world: WorldName): void {
    if (!isWorldId(world)) return;
    const hit = this.loaded.get(world);
    if (hit !== undefined) hit.touchedAt = Date.now();
  }

  /** Loaded worlds untouched since `before` (epoch ms, wall clock: idleness is real time). */
  idleSince(before: number): WorldId[] {
    const out: WorldId[] = [];
    for (const [id, w] of this.loaded) if (w.touchedAt < before) out.push(id);
    return out;
  }

  setOpenable(check: (world: WorldId) => boolean): void {
    this.openable = check;
  }

  /**
   * Runs `hook` whenever an ephemeral world's file is opened (its first use since boot or since
   * an unload), after its connection is in place: what a restart left half done in it resumes.
   */
  onLoad(hook: (world: WorldId) => void): void {
    this.loadHooks.push(hook);
  }

  /** Runs `hook` whenever an ephemeral world is unloaded (its engine stops, its caches go). */
  onUnload(hook: (world: WorldId) => void): void {
    this.unloadHooks.push(hook);
  }

  /**
   * Unloads a world: every holder drops its state of it (engine timers stopped), then its
   * connection closes. Its file stays; the next request loads it again.
   */
  unload(world: WorldId): void {
    const hit = this.loaded.get(world);
    for (const hook of this.unloadHooks) {
      try {
        hook(world);
      } catch (err) {
        this.log.warn(`unloading ${world}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    if (hit === undefined) return;
    this.loaded.delete(world);
    hit.db.close();
  }

  /**
   * One `T` per world, each made on that world's connection: how a module holds its per-world
   * repositories (`worlds.perWorld((db) => new CommentsRepository(db))`). An ephemeral world's
   * value is made on its first use and dropped when it unloads.
   */
  perWorld<T>(make: (db: SqlConnection, world: WorldName) => T): WorldScoped<T> {
    const scoped = new WorldScoped<T>((world) => make(this.connection(world), world));
    scoped.get('live');
    scoped.get('test');
    this.onUnload((world) => scoped.drop(world));
    return scoped;
  }

  onModuleDestroy(): void {
    for (const id of [...this.loaded.keys()]) this.unload(id);
  }
}
