import { randomBytes } from 'node:crypto';
import type { Logger } from '@nestjs/common';
import { LockSession } from '../cluster/lock-session.js';
import { lockKey } from '../cluster/lock-key.js';

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

/**
 * PostgreSQL: each instance holds a session advisory lock named after it on a dedicated session
 * for as long as it runs; PostgreSQL drops it with the session, so a process that dies (kill -9
 * included) releases it. An instance whose lock another can take is gone (the taker lets go at
 * once). Should this instance's own session drop, its lock is taken again before its next claim.
 */
export class PgClaimants implements IdempotencyClaimants {
  readonly instanceId = newInstanceId();
  private readonly session: LockSession;
  private heldIn = -1;

  constructor(
    databaseUrl: string,
    private readonly log: Pick<Logger, 'log' | 'warn' | 'error'>,
  ) {
    this.session = new LockSession({
      databaseUrl,
      applicationName: 'svc-idempotency',
      queryTimeoutMs: 10_000,
      log,
    });
    this.session.onLost((err) => {
      this.log.warn(
        `the idempotency claim session ended (${err instanceof Error ? err.message : String(err)}): taking it again`,
      );
    });
  }

  async start(): Promise<void> {
    if (this.heldIn === this.session.generation && this.session.connected) return;
    if (!(await this.session.tryLock(lockKey(CLAIMANT_NAMESPACE, this.instanceId)))) {
      // Only while another instance is checking on this one (it lets go at once).
      await new Promise((r) => setTimeout(r, 50));
      if (!(await this.session.tryLock(lockKey(CLAIMANT_NAMESPACE, this.instanceId)))) {
        throw new Error('the idempotency claim lock of this instance is held elsewhere');
      }
    }
    this.heldIn = this.session.generation;
  }

  async gone(ids: readonly string[]): Promise<Set<string>> {
    const out = new Set<string>();
    for (const id of ids) {
      if (id === this.instanceId) continue;
      const key = lockKey(CLAIMANT_NAMESPACE, id);
      if (await this.session.tryLock(key)) {
        await this.session.unlock(key);
        out.add(id);
      }
    }
    return out;
  }

  close(): Promise<void> {
    return this.session.close();
  }
}
