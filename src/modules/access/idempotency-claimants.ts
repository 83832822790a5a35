import { randomBytes } from 'node:crypto';
import type { Logger } from '@nestjs/common';
import { LockSession } from '../cluster/lock-session.js';
import { lockKey, type LockKey } from '../cluster/lock-key.js';

/** 'IDEM': the advisory lock that says an instance's Idempotency-Key claims are still running. */
const CLAIMANT_NAMESPACE = 0x4944454d;

/**
 * The instances that claim Idempotency-Keys, and which of them are gone: a RUNNING record whose
 * instance is gone never gets its answer stored, and is settled by whichever instance finds it
 * (IdempotencyService); one whose instance runs must be left alone, or its request would run
 * twice (once there, once for the retry the settled key lets in).
 */
export interface IdempotencyClaimants {
  /** This instance, written on each record it claims (`claimed_by`). */
  readonly instanceId: string;
  /** Marks this instance as running (before it claims anything). */
  start(): Promise<void>;
  /** The instances among `ids` that are gone (never this one). */
  gone(ids: readonly string[]): Promise<Set<string>>;
  close(): Promise<void>;
}

function newInstanceId(): string {
  return `ins_${randomBytes(12).toString('base64url')}`;
}

/**
 * SQLite: one process holds a DATA_DIR (its lock), so every other instance that claimed keys there
 * is a process that has stopped.
 */
export class LocalClaimants implements IdempotencyClaimants {
  readonly instanceId = newInstanceId();

  start(): Promise<void> {
    return Promise.resolve();
  }

  gone(ids: readonly string[]): Promise<Set<string>> {
    return Promise.resolve(new Set(ids.filter((id) => id !== this.instanceId)));
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** One of the two advisory locks that show an instance runs, on a session of its own. */
interface Hold {
  readonly session: LockSession;
  readonly key: LockKey;
  /** The session generation the lock was taken in (-1: not held). */
  heldIn: number;
}

/**
 * PostgreSQL: each instance holds two session advisory locks named after it, each on a dedicated
 * session of its own (`svc-idempotency:<id>`, the claim lock, and `svc-idempotency-instance:<id>`,
 * the instance lock), for as long as it runs. PostgreSQL drops a lock with its session, so a
 * process that dies (kill -9 included) releases both. An instance is gone only when another can
 * take both, twice `goneRecheckMs` apart (the taker lets go at once): one session that drops (a
 * terminated backend, a connection reset) leaves the other proving the instance alive, and the
 * instance takes the dropped lock again at once, so its running requests are never settled.
 */
export class PgClaimants implements IdempotencyClaimants {
  readonly instanceId = newInstanceId();
  private readonly holds: readonly Hold[];
  private closed = false;
  private readonly goneRecheckMs: number;

  constructor(
    databaseUrl: string,
    private readonly log: Pick<Logger, 'log' | 'warn' | 'error'>,
    opts: { goneRecheckMs?: number } = {},
  ) {
    this.goneRecheckMs = opts.goneRecheckMs ?? 1_000;
    this.holds = [
      this.hold(databaseUrl, `svc-idempotency:${this.instanceId}`, claimLock(this.instanceId)),
      this.hold(
        databaseUrl,
        `svc-idempotency-instance:${this.instanceId}`,
        instanceLock(this.instanceId),
      ),
    ];
  }

  private hold(databaseUrl: string, applicationName: string, key: LockKey): Hold {
    const session = new LockSession({
      databaseUrl,
      applicationName,
      queryTimeoutMs: 10_000,
      log: this.log,
    });
    const hold: Hold = { session, key, heldIn: -1 };
    session.onLost((err) => {
      if (this.closed) return;
      const other = this.holds.find((h) => h !== hold);
      const alone = other === undefined || !this.isHeld(other);
      const why = err instanceof Error ? err.message : String(err);
      if (alone) {
        this.log.error(
          `both idempotency claim sessions ended (${why}): until one is back, another instance may take this one for gone and settle its running Idempotency-Key requests`,
        );
      } else {
        this.log.warn(
          `the idempotency session ${applicationName} ended (${why}): taking its lock again`,
        );
      }
      void this.retake(hold);
    });
    return hold;
  }

  private isHeld(h: Hold): boolean {
    return h.session.connected && h.heldIn === h.session.generation;
  }

  /** Takes the lock again after its session ended, as soon as the database lets it. */
  private async retake(h: Hold): Promise<void> {
    for (let attempt = 0; !this.closed && !this.isHeld(h); attempt++) {
      try {
        await this.take(h);
        return;
      } catch (err) {
        if (attempt % 10 === 0) {
          this.log.warn(
            `taking the idempotency lock again failed (${err instanceof Error ? err.message : String(err)}); retrying`,
          );
        }
        // Unref'd: a database that stays down must not keep a stopping process alive.
        await sleep(Math.min(5_000, 50 * 2 ** Math.min(attempt, 7)), true);
      }
    }
  }

  /** Holds `h`'s lock in its current session (a peer checking on this instance lets go at once). */
  private async take(h: Hold): Promise<void> {
    if (this.isHeld(h)) return;
    for (let attempt = 0; ; attempt++) {
      if (await h.session.tryLock(h.key)) {
        h.heldIn = h.session.generation;
        return;
      }
      if (attempt >= 3) {
        throw new Error('the idempotency claim lock of this instance is held elsewhere');
      }
      await sleep(50);
    }
  }

  /** Both locks held (before each claim): a claim is never made that one dropped session could expose. */
  async start(): Promise<void> {
    await Promise.all(this.holds.map((h) => this.take(h)));
  }

  async gone(ids: readonly string[]): Promise<Set<string>> {
    const others = ids.filter((id) => id !== this.instanceId);
    const first = await this.free(others);
    if (first.length === 0) return new Set();
    // A live instance whose sessions all ended at once (the database restarted) takes its locks
    // again at once: only one still free a moment later is gone.
    await sleep(this.goneRecheckMs);
    return new Set(await this.free(first));
  }

  /** The instances among `ids` whose two locks this session could take (and let go at once). */
  private async free(ids: readonly string[]): Promise<string[]> {
    const session = this.holds[0].session;
    const out: string[] = [];
    for (const id of ids) {
      const taken: LockKey[] = [];
      for (const key of [claimLock(id), instanceLock(id)]) {
        if (!(await session.tryLock(key))) break;
        taken.push(key);
      }
      for (const key of taken) await session.unlock(key);
      if (taken.length === 2) out.push(id);
    }
    return out;
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.holds.map((h) => h.session.close()));
  }
}

/** The claim lock (the only one before the instance lock: older instances check this one alone). */
function claimLock(instanceId: string): LockKey {
  return lockKey(CLAIMANT_NAMESPACE, instanceId);
}

function instanceLock(instanceId: string): LockKey {
  return lockKey(CLAIMANT_NAMESPACE, `${instanceId}:instance`);
}

function sleep(ms: number, unref = false): Promise<void> {
  return new Promise((r) => {
    const t = setTimeout(r, ms);
    if (unref) t.unref();
  });
}
