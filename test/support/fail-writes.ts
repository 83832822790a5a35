import { dialectOf } from '../../src/common/sql/sql-connection.js';
import { openDatabaseOf } from './test-database.js';

export type WriteOp = 'INSERT' | 'UPDATE' | 'DELETE';

export interface FailWritesOptions {
  /**
   * Only rows (or moments) for which this SQL condition holds fail: NEW.x / OLD.x, a subquery,
   * written once for both engines. Omitted: every row.
   */
  when?: string;
  /** The error the database raises (the app logs it). */
  message?: string;
}

let planted = 0;

/**
 * Makes the database `name` ('platform', 'live', 'paper' or a world id) of the app booted on
 * `dataDir` refuse every `op` on `table` (as a full disk or a broken replica would), on either
 * engine: a BEFORE trigger that raises, planted from outside the app. Returns what takes it away
 * again (idempotent). SQLite: `RAISE(ABORT)` in the trigger. PostgreSQL: a trigger function that
 * raises, the condition inside it (a trigger's WHEN takes no subquery there) and its search_path
 * pinned to the database's schema, so its tables mean what they mean to the app.
 */
export function failWrites(
  dataDir: string,
  name: string,
  table: string,
  op: WriteOp,
  opts: FailWritesOptions = {},
): () => void {
  const trigger = `test_fail_${table}_${process.pid}_${++planted}`;
  const message = (opts.message ?? `${op} on ${table} refused by the test`).replace(/'/g, "''");
  const db = openDatabaseOf(dataDir, name);
  const postgres = dialectOf(db) === 'postgres';
  try {
    if (postgres) {
      const condition = opts.when ?? 'TRUE';
      const body = `BEGIN
          IF ${condition} THEN RAISE EXCEPTION '${message}'; END IF;
          IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
          RETURN NEW;
        END`;
      db.exec(
        `CREATE FUNCTION ${trigger}() RETURNS trigger LANGUAGE plpgsql
           SET search_path FROM CURRENT AS '${body.replace(/'/g, "''")}';
         CREATE TRIGGER ${trigger} BEFORE ${op} ON ${table}
           FOR EACH ROW EXECUTE FUNCTION ${trigger}()`,
      );
    } else {
      const when = opts.when === undefined ? '' : `WHEN ${opts.when}`;
      db.exec(
        `CREATE TRIGGER ${trigger} BEFORE ${op} ON ${table} FOR EACH ROW ${when}
         BEGIN SELECT RAISE(ABORT, '${message}'); END`,
      );
    }
  } finally {
    db.close();
  }
  let removed = false;
  return () => {
    if (removed) return;
    removed = true;
    const again = openDatabaseOf(dataDir, name);
    try {
      again.exec(
        postgres
          ? `DROP TRIGGER IF EXISTS ${trigger} ON ${table}; DROP FUNCTION IF EXISTS ${trigger}()`
          : `DROP TRIGGER IF EXISTS ${trigger}`,
      );
    } finally {
      again.close();
    }
  };
}
