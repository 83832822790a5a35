import { Injectable, Logger } from '@nestjs/common';

/** Deletes one user's records of one kind in the paper world; answers how many went. */
export type PaperRecordCleaner = (userId: string) => number | Promise<number>;

/**
 * The records a user keeps in the paper world beside its account (comments, watchlists,
 * notifications, and later RFQs and exports). Each module that stores such records registers a
 * cleaner at startup; `POST /sandbox/reset` runs them all after the account reset, and the live
 * world is never touched (the cleaners delete paper rows only).
 */
@Injectable()
export class PaperWorldRecords {
  private readonly log = new Logger('PaperWorldRecords');
  private readonly cleaners = new Map<string, PaperRecordCleaner>();

  /** `kind` names the records in the reset's answer (`cleared.<kind>`); one cleaner per kind. */
  register(kind: string, cleaner: PaperRecordCleaner): void {
    if (this.cleaners.has(kind)) throw new Error(`paper record cleaner ${kind} registered twice`);
    this.cleaners.set(kind, cleaner);
  }

  /**
   * Runs every cleaner for the user, each even when an earlier one failed (so one retry has less
   * to do), then rethrows the first failure (each is logged): a partly cleared world is a failed
   * reset (500), never a 200 that counts the failed kind as 0. Clearing is idempotent: running it
   * again deletes what is left.
   */
  async clear(userId: string): Promise<Record<string, number>> {
    const cleared: Record<string, number> = {};
    const failures: unknown[] = [];
    for (const [kind, cleaner] of [...this.cleaners].sort(([a], [b]) => a.localeCompare(b))) {
      try {
        cleared[kind] = await cleaner(userId);
      } catch (err) {
        this.log.error(`clearing paper ${kind} of ${userId} failed: ${String(err)}`);
        failures.push(err);
      }
    }
    if (failures.length > 0) throw failures[0];
    return cleared;
  }
}
