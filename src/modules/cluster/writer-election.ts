import { Subject, filter, type Observable } from 'rxjs';
import { Lease } from './lease.js';
import { LEASE_NAMESPACE, WRITER_NAMESPACE, lockKey } from './lock-key.js';
import { LockSession, type ClusterLog } from './lock-session.js';

/** A world's writer role as this instance holds it (epoch: the one it took over with). */
export interface Role {
  world: string;
  writer: boolean;
  /** The fencing epoch of the term that began or ended; null: never held. */
  epoch: number | null;
}

export interface WriterElectionOptions {
  databaseUrl: string;
  /** This instance, unique in the cluster (cluster_writers.holder, the Redis consumer name). */
  instanceId: string;
  /** How often a non-writer tries to take over, and a writer checks its session (ms, ≤ 1000). */
  retryMs?: number;
  /** See LockSessionOptions.queryTimeoutMs. */
  queryTimeoutMs?: number;
  /** The schema of the platform database, which holds cluster_writers. */
  schema?: string;
  /** Wall-clock time for acquired_at (the service Clock in the app). */
  now?: () => number;
  log: ClusterLog;
}

/**
 * One engine writer per world. An instance campaigns for the worlds it serves; it becomes a
 * world's writer by taking a session advisory lock on the world's name, on its own PostgreSQL
 * session (see LockSession), and then increments the world's fencing epoch in cluster_writers,
 * keeping the new value for its term: every commit it makes checks that epoch first (fence.ts),
 * so a writer deposed without noticing can never commit after the next one took over.
 *
 * Instances that do not hold a world's lock try again every `retryMs`, so when the holder dies
 * (PostgreSQL releases its locks with its backend) another takes over within about that time.
 * The writer checks its session on the same rhythm and steps down at once when it fails.
 *
 * Role changes are pushed to `roles$` / `onRole`: the runtime starts its timers (price feed,
 * market close, samplers) and restores its engine from the database when a term begins, and
 * stops them when it ends.
 */
export class WriterElection {
  readonly session: LockSession;
  private readonly wanted = new Set<string>();
  /** World -> epoch of the term this instance holds now. */
  private readonly held = new Map<string, number>();
  private readonly changes = new Subject<Role>();
  private readonly leases = new Map<string, Lease>();
  private timer: NodeJS.Timeout | null = null;
  private round: Promise<void> | null = null;
  private failing = false;
  private stopped = false;
  /** No campaigning before this time (ms): after losing its session, see stepDownAll. */
  private holdOffUntil = 0;
  private readonly retryMs: number;
  private readonly table: string;
  private readonly now: () => number;

  /** Every role change of this instance, as it happens. */
  readonly roles$: Observable<Role> = this.changes.asObservable();

  constructor(private readonly opts: WriterElectionOptions) {
    this.retryMs = Math.min(opts.retryMs ?? 500, 1000);
    this.table = `"${opts.schema ?? 'platform'}".cluster_writers`;
    this.now = opts.now ?? Date.now;
    this.session = new LockSession({
      databaseUrl: opts.databaseUrl,
      applicationName: `svc-writer:${opts.instanceId}`.slice(0, 63),
      queryTimeoutMs: opts.queryTimeoutMs ?? 3000,
      log: opts.log,
    });
    this.session.onLost(() => this.stepDownAll());
  }

  get instanceId(): string {
    return this.opts.instanceId;
  }

  /** Starts campaigning (every `retryMs`) for the worlds given now or later with campaign(). */
  start(): void {
    if (this.timer !== null || this.stopped) return;
    this.timer = setInterval(() => void this.tick(), this.retryMs);
    this.timer.unref();
    void this.tick();
  }

  /** Campaigns for a world's writer role (at the next round; at once if started). */
  campaign(world: string): void {
    this.wanted.add(world);
    if (this.timer !== null) void this.tick();
  }

  /** Gives a world's writer role up (an unloaded world) and stops campaigning for it. */
  async resign(world: string): Promise<void> {
    this.wanted.delete(world);
    const epoch = this.held.get(world);
    if (epoch === undefined) return;
    this.held.delete(world);
    this.changes.next({ world, writer: false, epoch });
    if (this.session.connected) await this.session.unlock(lockKey(WRITER_NAMESPACE, world));
  }

  isWriter(world: string): boolean {
    return this.held.has(world);
  }

  /** The epoch of this instance's current term as the world's writer, null when not its writer. */
  epoch(world: string): number | null {
    return this.held.get(world) ?? null;
  }

  /**
   * Calls `cb` with the world's role now, then on every change; returns the unsubscribe.
   * The callback runs synchronously with the change (a lost session steps down before anything
   * else runs), so it must not throw: an error is logged and the others still run.
   */
  onRole(world: string, cb: (role: Role) => void): () => void {
    const safe = (r: Role) => {
      try {
        cb(r);
      } catch (err) {
        this.opts.log.error(`a role callback of ${world} failed: ${String(err)}`);
      }
    };
    safe({ world, writer: this.isWriter(world), epoch: this.epoch(world) });
    const sub = this.changes.pipe(filter((r) => r.world === world)).subscribe(safe);
    return () => sub.unsubscribe();
  }

  /** A named lease on this instance's session, for run-once timers not tied to a world. */
  lease(name: string): Lease {
    let lease = this.leases.get(name);
    if (lease === undefined) {
      lease = new Lease(this.session, lockKey(LEASE_NAMESPACE, name));
      this.leases.set(name, lease);
    }
    return lease;
  }

  /** One campaign round now (what the timer runs), for callers that must not wait for it. */
  tick(): Promise<void> {
    this.round ??= this.campaignRound().finally(() => (this.round = null));
    return this.round;
  }

  /**
   * A whole campaign round begun after this call: the round in progress (which may have started
   * before a world just campaigned for was wanted) is waited out first. Concurrent callers share
   * the new round, so a burst of new worlds is one round, not one each.
   */
  async nextRound(): Promise<void> {
    await this.round;
    await this.tick();
  }

  /** Stops campaigning and ends the session: PostgreSQL releases every lock at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    await this.round;
    this.stepDownAll();
    await this.session.close();
    this.changes.complete();
  }

  private async campaignRound(): Promise<void> {
    if (this.stopped) return;
    try {
      const generation = this.session.connected ? this.session.generation : -1;
      await this.session.ensure();
      // The heartbeat: a session that died quietly fails here (or times out), and the
      // writer steps down within a round instead of on the next commit.
      if (this.held.size > 0 && generation === this.session.generation) {
        await this.session.query('SELECT 1');
      }
      if (Date.now() >= this.holdOffUntil) {
        for (const world of [...this.wanted]) {
          if (!this.held.has(world) && !this.stopped) await this.tryAcquire(world);
        }
      }
      if (this.failing) this.opts.log.log('the cluster lock session is back');
      this.failing = false;
    } catch (err) {
      // One line per outage, not one per round.
      if (!this.failing) {
        this.opts.log.warn(
          `writer election round failed (${err instanceof Error ? err.message : String(err)}); retrying every ${this.retryMs} ms`,
        );
      }
      this.failing = true;
    }
  }

  private async tryAcquire(world: string): Promise<void> {
    const generation = this.session.generation;
    const key = lockKey(WRITER_NAMESPACE, world);
    if (!(await this.session.tryLock(key))) return;
    let epoch: number;
    try {
      epoch = await this.bumpEpoch(world);
    } catch (err) {
      if (this.session.connected) await this.session.unlock(key).catch(() => undefined);
      throw err;
    }
    // The session may have been lost (its lock with it) or the world resigned meanwhile.
    if (!this.session.connected || this.session.generation !== generation) return;
    if (!this.wanted.has(world) || this.stopped) {
      await this.session.unlock(key);
      return;
    }
    this.held.set(world, epoch);
    this.changes.next({ world, writer: true, epoch });
  }

  /**
   * The new term's epoch. Its row lock queues behind a commit of the deposed writer still
   * holding the fence's lock, so that commit lands before the new term begins (and the new
   * writer's restore reads it), and none of the old term's can land after.
   */
  private async bumpEpoch(world: string): Promise<number> {
    const rows = await this.session.query<{ epoch: string }>(
      `INSERT INTO ${this.table} (world, epoch, holder, acquired_at) VALUES ($1, 1, $2, $3)
       ON CONFLICT (world) DO UPDATE SET epoch = cluster_writers.epoch + 1,
         holder = EXCLUDED.holder, acquired_at = EXCLUDED.acquired_at
       RETURNING epoch`,
      [world, this.opts.instanceId, new Date(this.now()).toISOString()],
    );
    return Number(rows[0].epoch);
  }

  /**
   * The session is gone, and every lock with it: every term ends now. This instance then sits
   * out two rounds before campaigning again, so a healthy instance takes over rather than the one
   * whose connection just failed (it may be failing again); alone, it takes its worlds back.
   */
  private stepDownAll(): void {
    this.holdOffUntil = Date.now() + 2 * this.retryMs;
    const ended = [...this.held];
    this.held.clear();
    for (const [world, epoch] of ended) this.changes.next({ world, writer: false, epoch });
  }
}
