import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { rmSync } from 'node:fs';
import { isWorldId, type WorldId, type WorldName } from '../../common/environment.js';
import { ConfigService } from '../../config/config.service.js';
import { NotificationsService } from '../notifications/notifications.service.js';
import { WriterUnavailableError } from '../cluster/cluster-errors.js';
import { EngineRegistry } from '../trading/engine-registry.js';
import { WebhookOutbox } from '../webhooks/webhook-outbox.service.js';
import { WorldClocks } from '../worlds/world-clocks.service.js';
import { WorldDatabases } from '../worlds/world-databases.service.js';
import { DataExportsRepository, type ExportRow } from './data-exports.repository.js';
import { DatasetReader, type ExportFormat, type ExportScope } from './datasets.js';
import { countRows, estimateSize, sampleSize } from './export-writer.js';
import { ExportFileStore } from './export-file-store.js';
import {
  countAndSampleInThread,
  countInThread,
  ExportThread,
  exportSourceOf,
  type CountThreadJob,
  type ExportSource,
} from './export-thread.js';
import type { WorldScoped } from '../worlds/world-scoped.js';

/** Jobs one user may have RUNNING at once (all worlds together); more wait QUEUED. */
export const MAX_RUNNING_PER_USER = 2;
/** A READY export is kept this long on its world's clock, then EXPIRED and its file deleted. */
export const EXPORT_TTL_MS = 7 * 24 * 3600 * 1000;

/** The worlds whose jobs are always looked at; an ephemeral world's only while it has work. */
const WORLDS: readonly WorldName[] = ['live', 'test'];

/**
 * Up to this many rowids a count runs on the request thread (a few 2,000-rowid steps, well under
 * a millisecond each); a larger one runs in a worker thread, whose start costs more than such a
 * small count but far less than a large one's SQLite work on the thread serving requests.
 */
const MAIN_THREAD_COUNT_ROWIDS = 20_000;

interface Running {
  world: WorldName;
  userId: string;
  /** Stopped by DELETE, reset or shutdown: not a failure. */
  cancelled: boolean;
  /**
   * Cluster mode: this instance's writer term of the world ended while the job ran. Stopped,
   * left RUNNING in the database, for the world's new writer to re-queue and run.
   */
  deposed: boolean;
  /** The job's worker thread, once started. */
  thread: ExportThread | null;
  done: Promise<void>;
}

/** The export jobs' per-world parts: their rows, readers of the world's data and files. */
export interface ExportWorlds {
  repos: WorldScoped<DataExportsRepository>;
  /** Main-thread readers, for the snapshot bound, counts and estimates of a request. */
  readers: WorldScoped<DatasetReader>;
  /** Each world's engine database, which a job's worker reads on a connection of its own. */
  sources: WorldScoped<ExportSource>;
  files: ExportFileStore;
}

/**
 * Runs export jobs of every world (live, paper and ephemeral worlds) off the request path and off
 * the main thread: each running job reads, formats, hashes and writes its rows in its own worker
 * thread (export-worker.ts) on a read-only connection to its world's database, so requests never
 * wait behind an export's batches. This
 * thread keeps the jobs' lifecycle: their rows (QUEUED, RUNNING, READY, FAILED), the slots, the
 * final rename, the notices and expiry. The jobs' state is in each world's database; this holds
 * only what runs now. At most {@link MAX_RUNNING_PER_USER} per user run at once, the others
 * start in creation order as slots free. At boot, jobs a crash cut short are re-queued (their
 * partial files deleted): each exports the rows of its snapshot bound, so the re-run writes the
 * same rows. A finished job becomes READY with its figures in one update, notifies EXPORT_READY
 * and sends the data_export.ready webhook. READY exports expire after {@link EXPORT_TTL_MS} on
 * the world's clock (a sweep every EXPORT_SWEEP_MS over the loaded worlds, and every read sweeps
 * its world first).
 *
 * An ephemeral world's jobs live in its own file: the runner looks at that world's queue only
 * while it has queued work ({@link wake}), and a job keeps running when the world is unloaded for
 * idleness (its worker reads the file on a connection of its own; the finish opens the world
 * again to mark it READY). A world's jobs a restart cut short are re-queued when the world is next
 * opened. Deleting a world stops its jobs and removes its folder of files ({@link clearWorld}).
 *
 * In cluster mode (docs/cluster.md) a world's jobs run on its writer, which serves its export
 * requests (forwarded there) and keeps the files: another instance neither starts, sweeps nor
 * re-queues them (a booting instance would otherwise re-queue the jobs running on the writer).
 * A new writer re-queues the jobs its world's previous writer left RUNNING.
 */
@Injectable()
export class ExportRunner implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly log = new Logger('ExportRunner');
  readonly parts: ExportWorlds;
  private readonly running = new Map<string, Running>();
  /** Ephemeral worlds that may have QUEUED jobs. */
  private readonly pending = new Set<WorldId>();
  private stopped = false;
  private sweepTimer: NodeJS.Timeout | null = null;

  constructor(
    worlds: WorldDatabases,
    private readonly config: ConfigService,
    private readonly clocks: WorldClocks,
    private readonly notifications: NotificationsService,
    private readonly outbox: WebhookOutbox,
    private readonly engines: EngineRegistry,
  ) {
    this.parts = {
      repos: worlds.perWorld((db, world) => {
        const repo = new DataExportsRepository(db);
        if (isWorldId(world) && engines.writes(world)) this.resume(world, repo);
        return repo;
      }),
      readers: worlds.perWorld((db) => new DatasetReader(db)),
      sources: worlds.perWorld((db) => exportSourceOf(db)),
      files: new ExportFileStore(config.values.dataDir),
    };
    // Whatever request opens a world (an order, a read), its cut-short jobs resume then, not
    // only when its exports are next read. Deferred: the open may be this runner's own.
    worlds.onLoad((world) =>
      setImmediate(() => {
        try {
          this.parts.repos.get(world);
        } catch {
          // Deleted meanwhile (404 on open): nothing of it resumes.
        }
      }),
    );
  }

  onApplicationBootstrap(): void {
    for (const world of WORLDS) {
      if (!this.engines.writes(world)) continue;
      this.parts.files.prepare(world);
      const requeued = this.parts.repos.get(world).requeueRunning();
      const partials = this.parts.files.removePartials(world);
      if (requeued + partials > 0) {
        this.log.warn(
          `${world}: ${requeued} export(s) cut short re-queued, ${partials} partial file(s) removed`,
        );
      }
    }
    // Cluster mode: the world's jobs become this instance's. An ephemeral world's resume when it
    // is next opened, as the writer, or now if it was opened before the term began: the first
    // request after a restart opens the world in its sandbox-scenario stage, before the forward
    // stage campaigns for it, so its jobs' rows were read here while no instance wrote it (no
    // resume), and the term that begins then opens nothing again.
    this.engines.onTermStart((world) => {
      if (isWorldId(world)) {
        const repo = this.parts.repos.peek(world);
        if (repo !== undefined) this.resume(world, repo);
        return;
      }
      this.resume(world, this.parts.repos.get(world));
      this.schedule();
    });
    // A term that ends (deposed, yet alive) stops the world's jobs here: the new writer runs them.
    this.engines.onTermEnd((world) => void this.depose(world));
    this.sweep();
    this.schedule();
    this.sweepTimer = setInterval(() => this.sweep(), this.config.values.exportSweepMs);
    this.sweepTimer.unref();
  }

  /**
   * Terminates the running jobs' workers before the databases close (the jobs stay RUNNING in
   * the database and are re-queued at the next boot).
   */
  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    if (this.sweepTimer !== null) clearInterval(this.sweepTimer);
    await Promise.all([...this.running.keys()].map((id) => this.cancel(id)));
  }

  /** A job was queued in `world`: look at its queue from now on, and start what may start. */
  wake(world: WorldName): void {
    if (isWorldId(world)) this.pending.add(world);
    this.schedule();
  }

  /**
   * Starts queued jobs, oldest first over the live and paper worlds and the ephemeral worlds with
   * queued work, while their users have a free slot.
   */
  schedule(): void {
    if (this.stopped) return;
    const queued: { world: WorldName; row: ExportRow }[] = [];
    for (const world of [...WORLDS, ...this.pending]) {
      if (!this.engines.writes(world)) continue;
      let rows: ExportRow[];
      try {
        rows = this.parts.repos.get(world).queued(1000);
      } catch {
        // A deleted world (404 on open): nothing of it runs any more.
        this.pending.delete(world as WorldId);
        continue;
      }
      if (rows.length === 0 && isWorldId(world)) this.pending.delete(world);
      for (const row of rows) queued.push({ world, row });
    }
    queued.sort((a, b) => (a.row.id < b.row.id ? -1 : a.row.id > b.row.id ? 1 : 0));
    for (const { world, row } of queued) {
      if (this.runningFor(row.user_id) >= MAX_RUNNING_PER_USER) continue;
      if (!this.parts.repos.get(world).start(row.id)) continue;
      const entry: Running = {
        world,
        userId: row.user_id,
        cancelled: false,
        deposed: false,
        thread: null,
        done: Promise.resolve(),
      };
      this.running.set(row.id, entry);
      entry.done = this.run(world, { ...row, status: 'RUNNING' }, entry);
    }
  }

  /**
   * Stops a running job (DELETE, reset, shutdown) by terminating its worker; resolves once its
   * partial file is removed. Nothing to do when it is not running here.
   */
  async cancel(id: string): Promise<void> {
    const r = this.running.get(id);
    if (r === undefined) return;
    r.cancelled = true;
    await r.thread?.stop();
    await r.done;
  }

  /**
   * Cluster mode: this instance no longer writes `world`. Its jobs running here stop (their
   * workers terminated, partial files removed) and stay RUNNING in the database: the world's new
   * writer re-queues and runs them (its term start); none is marked READY or FAILED from here.
   */
  async depose(world: WorldName): Promise<void> {
    const mine = [...this.running].filter(([, r]) => r.world === world);
    for (const [, r] of mine) r.deposed = r.cancelled = true;
    await Promise.all(mine.map(([id]) => this.cancel(id)));
    if (mine.length > 0) {
      this.log.warn(
        `${world}: ${mine.length} export(s) stopped, no longer its writer; the new writer re-runs them`,
      );
    }
  }

  /**
   * The scope's rows through rowid `hi` (some number above `stopAbove` once past it, see
   * {@link countRows}): the count a create or estimate answers with.
   */
  count(world: WorldName, scope: ExportScope, hi: number, stopAbove?: number): Promise<number> {
    if (hi <= MAIN_THREAD_COUNT_ROWIDS) {
      return countRows(this.parts.readers.get(world), scope, hi, stopAbove);
    }
    return countInThread(this.countJob(world, scope, hi, stopAbove));
  }

  /**
   * An estimate: the count and the size, from a sample of the first rows read where the count
   * is read (in the worker thread for a large table, never the request thread's PostgreSQL
   * connection then, see countAndSampleInThread).
   */
  async estimate(
    world: WorldName,
    scope: ExportScope,
    format: ExportFormat,
    hi: number,
  ): Promise<{ count: number; size: number }> {
    if (hi <= MAIN_THREAD_COUNT_ROWIDS) {
      const reader = this.parts.readers.get(world);
      const count = await countRows(reader, scope, hi);
      const sample = count > 0 ? await sampleSize(reader, scope, format, hi) : null;
      return { count, size: estimateSize(scope, format, count, sample) };
    }
    const { count, sample } = await countAndSampleInThread({
      ...this.countJob(world, scope, hi),
      sample: format,
    });
    return { count, size: estimateSize(scope, format, count, sample) };
  }

  private countJob(
    world: WorldName,
    scope: ExportScope,
    hi: number,
    stopAbove?: number,
  ): CountThreadJob {
    return {
      count: true,
      source: this.parts.sources.get(world),
      dataset: scope.def.dataset,
      userId: scope.userId,
      start: scope.start,
      end: scope.end,
      marketIds: scope.marketIds,
      hi,
      stopAbove: stopAbove ?? Number.MAX_SAFE_INTEGER,
    };
  }

  isRunning(id: string): boolean {
    return this.running.has(id);
  }

  /**
   * READY exports past their expiry on their world's clock become EXPIRED and lose their file:
   * in `world`, or in every world open now (an unloaded world's are swept when it is next read).
   */
  sweep(world?: WorldName): void {
    const worlds = world === undefined ? [...this.parts.repos.entries()].map(([w]) => w) : [world];
    for (const w of worlds) {
      if (!this.engines.writes(w)) continue;
      let now: string;
      let repo: DataExportsRepository;
      try {
        now = this.clocks.for(w).nowDate().toISOString();
        repo = this.parts.repos.get(w);
      } catch {
        continue; // deleted meanwhile: its files go with it
      }
      for (const row of repo.due(now)) {
        if (repo.expire(row.id)) this.parts.files.remove(w, row.id, row.format);
      }
    }
  }

  /**
   * An ephemeral world is deleted (or expired): its running jobs are stopped and its folder of
   * export files removed; its job rows go with its database file. Answers the files removed.
   */
  async clearWorld(world: WorldId): Promise<number> {
    this.pending.delete(world);
    const mine = [...this.running].filter(([, r]) => r.world === world).map(([id]) => id);
    await Promise.all(mine.map((id) => this.cancel(id)));
    return this.parts.files.removeWorld(world);
  }

  /**
   * An ephemeral world opened (its first use since boot or since an unload), or a world whose
   * writer this instance became (cluster mode): jobs RUNNING in its database that run nowhere here
   * were cut short by a restart or a dead writer; they go back to the queue with their partial
   * files removed, as the live and paper worlds' do at boot.
   */
  private resume(world: WorldName, repo: DataExportsRepository): void {
    let requeued = 0;
    for (const row of repo.running()) {
      if (this.running.has(row.id)) continue; // unloaded mid-run: still running, from the file
      if (repo.requeue(row.id)) requeued++;
      rmSync(this.parts.files.partPath(world, row.id, row.format), { force: true });
    }
    if (requeued > 0) this.log.warn(`${world}: ${requeued} export(s) cut short re-queued`);
    if (isWorldId(world) && repo.queued(1).length > 0) {
      this.pending.add(world);
      // Not from inside the open that called this (a schedule may be under way).
      setImmediate(() => this.schedule());
    }
  }

  private runningFor(userId: string): number {
    let n = 0;
    for (const r of this.running.values()) if (r.userId === userId) n++;
    return n;
  }

  private async run(world: WorldName, row: ExportRow, entry: Running): Promise<void> {
    const { repos, files } = this.parts;
    try {
      // Off the request that queued it.
      await new Promise((r) => setImmediate(r));
      if (entry.cancelled) throw new Error('export stopped');
      files.prepare(world);
      entry.thread = new ExportThread({
        source: this.parts.sources.get(world),
        dataset: row.dataset,
        format: row.format,
        userId: row.user_id,
        start: row.start,
        end: row.end,
        marketIds: row.market_ids === null ? null : (JSON.parse(row.market_ids) as string[]),
        hi: row.last_rowid,
        path: files.partPath(world, row.id, row.format),
        batchRows: this.config.values.exportBatchRows,
      });
      const written = await entry.thread.done;
      if (entry.cancelled) throw new Error('export stopped');
      await files.complete(world, row.id, row.format);
      const readyAt = this.clocks.for(world).now();
      let marked: boolean;
      try {
        // Fenced in cluster mode: a writer deposed meanwhile marks nothing (the new one re-runs it).
        marked = repos.get(world).ready(
          row.id,
          {
            record_count: written.records,
            size_bytes: written.bytes,
            sha256: written.sha256,
            ready_at: new Date(readyAt).toISOString(),
            expires_at: new Date(readyAt + EXPORT_TTL_MS).toISOString(),
          },
          this.engines.fence(world),
        );
      } catch (err) {
        files.remove(world, row.id, row.format);
        if (err instanceof WriterUnavailableError) entry.deposed = entry.cancelled = true;
        throw err;
      }
      if (!marked) {
        // Deleted (or reset) while it ran: nothing may keep its file.
        files.remove(world, row.id, row.format);
      } else {
        this.announce(world, repos.get(world).get(row.id)!);
      }
    } catch (err) {
      // The worker has exited (or never started): nothing writes the partial file any more.
      await files.removePart(world, row.id, row.format).catch(() => undefined);
      if (!entry.cancelled && !this.stopped) {
        this.log.error(
          `export ${row.id} (${world}) failed: ${err instanceof Error ? err.stack : String(err)}`,
        );
        try {
          repos.get(world).failed(row.id, err instanceof Error ? err.message : String(err));
        } catch {
          // Its world was deleted meanwhile: the job went with it.
        }
      } else if (entry.deposed) {
        this.log.log(
          `export ${row.id} (${world}) stopped: this instance no longer writes ${world}`,
        );
      } else if (this.stopped && entry.thread !== null) {
        this.log.log(
          `export ${row.id} (${world}) stopped by shutdown after ${entry.thread.records} rows: re-queued at the next boot`,
        );
      }
    } finally {
      this.running.delete(row.id);
      this.schedule();
    }
  }

  /** EXPORT_READY in the export's world, and the data_export.ready webhook. */
  private announce(world: WorldName, row: ExportRow): void {
    const data = {
      export_id: row.id,
      dataset: row.dataset,
      format: row.format,
      record_count: row.record_count,
      size_bytes: row.size_bytes,
      sha256: row.sha256,
      expires_at: row.expires_at,
    };
    try {
      this.notifications.notify({
        userId: row.user_id,
        environment: world,
        type: 'EXPORT_READY',
        title: `Your ${row.dataset} export is ready`,
        body: `${row.record_count} records (${row.format}), downloadable until ${row.expires_at}.`,
        data,
      });
      this.outbox.publishUserEvent(world, row.user_id, 'data_export.ready', {
        ...data,
        status: row.status,
        ready_at: row.ready_at,
      });
    } catch (err) {
      // The export is READY either way; a lost notice is logged, not a failed export.
      this.log.error(`export ${row.id}: notice failed: ${String(err)}`);
    }
  }
}
