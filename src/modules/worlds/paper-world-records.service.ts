import { Injectable, Logger } from '@nestjs/common';
import type { WorldId, WorldName } from '../../common/environment.js';
import type { SqlConnection } from '../../common/sql/sql-connection.js';

/**
 * Deletes one user's records of one kind in a paper world (the shared one, `test`, or an
 * ephemeral world); answers how many went.
 */
export type PaperRecordCleaner = (userId: string, world: WorldName) => number | Promise<number>;

/**
 * Stages the deletion of one user's records of one kind inside the reset's own transaction, on
 * the world's engine connection `db` (the one that commits the account reset): deferred writes
 * only (runDeferred, queryDeferred), no read whose answer it needs now, so on PostgreSQL they go
 * to the server with the reset's COMMIT, one round trip, and commit or roll back with the account
 * reset. Answers what to run once that transaction has committed: it reads the deferred results
 * (how many went), does what is outside the database (caches, files, running jobs) and answers
 * the count.
 */
export type StagedPaperRecordCleaner = (
  userId: string,
  world: WorldName,
  db: SqlConnection,
) => () => number | Promise<number>;

/**
 * Deletes every record of one kind an ephemeral world left outside its own file (rows in the
 * platform database keyed by the world id, files beside it); answers how many went.
 */
export type WorldRecordCleaner = (world: WorldId) => number | Promise<number>;

/**
 * The records a user keeps in the paper world beside its account (comments, watchlists,
 * notifications, RFQs, exports, ...). Each module that stores such records registers a cleaner at
 * startup: a staged one (records in the world's engine database) joins the account reset's own
 * transaction; the others (the platform database's notifications, RFQs that release holds) run
 * after it. The live world is never touched (the cleaners delete paper rows only).
 */
@Injectable()
export class PaperWorldRecords {
  private readonly log = new Logger('PaperWorldRecords');
  private readonly cleaners = new Map<string, PaperRecordCleaner>();
  private readonly staged = new Map<string, StagedPaperRecordCleaner>();
  private readonly worldCleaners = new Map<string, WorldRecordCleaner>();

  /** `kind` names the records in the reset's answer (`cleared.<kind>`); one cleaner per kind. */
  register(kind: string, cleaner: PaperRecordCleaner): void {
    this.unique(kind);
    this.cleaners.set(kind, cleaner);
  }

  /**
   * A cleaner whose deletes run inside the reset's transaction (see StagedPaperRecordCleaner):
   * the way a module whose records live in the world's engine database registers, so a reset is
   * one transaction (atomic) and, on PostgreSQL, costs no round trip of its own.
   */
  registerStaged(kind: string, cleaner: StagedPaperRecordCleaner): void {
    this.unique(kind);
    this.staged.set(kind, cleaner);
  }

  private unique(kind: string): void {
    if (this.cleaners.has(kind) || this.staged.has(kind)) {
      throw new Error(`paper record cleaner ${kind} registered twice`);
    }
  }

  /**
   * Stages every staged cleaner for the user inside the caller's open transaction on `db` (a
   * throw fails that transaction); answers what finishes them once it has committed: their counts
   * by kind. If that finish fails for one kind, the others still finish, then the first failure
   * is rethrown (the records are deleted; what is left is outside the database).
   */
  stage(
    userId: string,
    world: WorldName,
    db: SqlConnection,
  ): () => Promise<Record<string, number>> {
    const finishes = [...this.staged]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([kind, cleaner]) => [kind, cleaner(userId, world, db)] as const);
    return async () => {
      const cleared: Record<string, number> = {};
      const failures: unknown[] = [];
      for (const [kind, finish] of finishes) {
        try {
          cleared[kind] = await finish();
        } catch (err) {
          this.log.error(`finishing ${world} ${kind} of ${userId} failed: ${String(err)}`);
          failures.push(err);
        }
      }
      if (failures.length > 0) throw failures[0];
      return cleared;
    };
  }

  /**
   * Runs every cleaner for the user, each even when an earlier one failed (so one retry has less
   * to do), then rethrows the first failure (each is logged): a partly cleared world is a failed
   * reset (500), never a 200 that counts the failed kind as 0. Clearing is idempotent: running it
   * again deletes what is left.
   */
  async clear(userId: string, world: WorldName = 'test'): Promise<Record<string, number>> {
    const cleared: Record<string, number> = {};
    const failures: unknown[] = [];
    for (const [kind, cleaner] of [...this.cleaners].sort(([a], [b]) => a.localeCompare(b))) {
      try {
        cleared[kind] = await cleaner(userId, world);
      } catch (err) {
        this.log.error(`clearing ${world} ${kind} of ${userId} failed: ${String(err)}`);
        failures.push(err);
      }
    }
    if (failures.length > 0) throw failures[0];
    return cleared;
  }

  /**
   * `cleaner` runs when an ephemeral world is deleted or expires (and when a boot finishes a
   * delete a stop interrupted): the world's file goes with it, and this removes what a module
   * keeps of the world elsewhere, so nothing of a deleted world remains. One cleaner per kind.
   */
  registerWorld(kind: string, cleaner: WorldRecordCleaner): void {
    if (this.worldCleaners.has(kind))
      throw new Error(`world record cleaner ${kind} registered twice`);
    this.worldCleaners.set(kind, cleaner);
  }

  /**
   * Runs every world cleaner for a deleted world, each even when an earlier one failed, then
   * rethrows the first failure: the world's delete stays DELETING and a later boot retries it.
   */
  async clearWorld(world: WorldId): Promise<Record<string, number>> {
    const cleared: Record<string, number> = {};
    const failures: unknown[] = [];
    for (const [kind, cleaner] of this.worldCleaners) {
      try {
        cleared[kind] = await cleaner(world);
      } catch (err) {
        this.log.error(`clearing ${kind} of world ${world} failed: ${String(err)}`);
        failures.push(err);
      }
    }
    if (failures.length > 0) throw failures[0];
    return cleared;
  }
}
