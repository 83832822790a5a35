/**
 * The synchronous SQL port: exactly the part of better-sqlite3's `Database` the service uses, so
 * a better-sqlite3 connection IS a `SqlConnection` (no wrapper on the SQLite path, the hot path
 * keeps its speed) and `PgSyncConnection` runs the same calls on PostgreSQL.
 *
 * Parameters are better-sqlite3's: positional `?` values, or one object whose keys bind the named
 * `@name` / `:name` / `$name` parameters. Rows come back with the column names of the SELECT and
 * integers as numbers on both.
 */

/** What `run` reports: the rows the statement inserted, updated or deleted. */
export interface SqlRunResult {
  changes: number;
}

export interface SqlStatement<P extends unknown[] = unknown[], R = unknown> {
  run(...params: P): SqlRunResult;
  get(...params: P): R | undefined;
  all(...params: P): R[];
  /** Rows as arrays of values in column order instead of objects (`raw(true)`). */
  raw(toggle?: boolean): this;
}

// `any` as in better-sqlite3's own typing: a transaction wraps a function of any parameters.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type SqlTransactionBody = (...params: any[]) => unknown;

/**
 * A function that runs `fn` in a transaction: committed when it returns, rolled back when it
 * throws; called inside another transaction it is a savepoint of it. `immediate` takes the write
 * lock at BEGIN (SQLite; on PostgreSQL it is the same transaction, row locks order writers).
 */
type ArgumentsOf<F extends SqlTransactionBody> = F extends (...args: infer A) => unknown
  ? A
  : never;

export interface SqlTransaction<F extends SqlTransactionBody> {
  (...params: ArgumentsOf<F>): ReturnType<F>;
  immediate(...params: ArgumentsOf<F>): ReturnType<F>;
}

export type SqlDialect = 'sqlite' | 'postgres';

/** A transaction whose COMMIT was sent without blocking the thread (see SqlConnection.commitAsync). */
export interface SqlCommitInFlight {
  /** Settles (never rejects) once the COMMIT has answered. */
  readonly answered: Promise<void>;
  /**
   * Blocks until the COMMIT has answered (at once if it has); throws its error if the
   * transaction failed (it was rolled back: nothing of it is stored).
   */
  join(): void;
}

export interface SqlConnection {
  /**
   * Which engine answers. better-sqlite3's connections carry 'sqlite' on their prototype
   * (sqlite-dialect.ts); the type leaves it optional so a plain `new Database()` is a
   * SqlConnection as it is. Read it through `dialectOf`.
   */
  readonly dialect?: SqlDialect;
  /** Whether a transaction is open on this connection now. */
  readonly inTransaction: boolean;
  prepare<P extends unknown[] | object = unknown[], R = unknown>(
    sql: string,
  ): P extends unknown[] ? SqlStatement<P, R> : SqlStatement<[P], R>;
  transaction<F extends SqlTransactionBody>(fn: F): SqlTransaction<F>;
  /**
   * PostgreSQL only: runs `fn` in a transaction as `transaction` does, but sends what it left
   * unsent (its deferred writes, see runDeferred) with the COMMIT without waiting for the answer.
   * The connection's later calls run after that COMMIT (one connection answers in order).
   * Absent on SQLite, whose commit is a local write.
   */
  commitAsync?(fn: () => void): SqlCommitInFlight;
  /** Runs SQL text of one or more statements, no parameters, no rows. */
  exec(sql: string): unknown;
  close(): unknown;
}

/** The engine behind a connection (better-sqlite3's own connections say 'sqlite'). */
export function dialectOf(db: SqlConnection): SqlDialect {
  return db.dialect ?? 'sqlite';
}

/**
 * What a deferred statement did (see {@link runDeferred}), known once the round trip that carried
 * it has answered: at once on SQLite, at the transaction's next round trip on PostgreSQL (reading
 * it before then throws). A transaction that writes everything deferred can still answer how many
 * rows each write touched, read after it committed.
 */
export interface DeferredRun {
  /** The rows the statement inserted, updated or deleted. */
  readonly changes: number;
  /** The rows it returned (a query, or a write's RETURNING, through {@link queryDeferred}). */
  readonly rows: unknown[];
}

/** A write's rows on SQLite (none: a RETURNING goes through queryDeferred), shared. */
const NO_ROWS: unknown[] = Object.freeze([]) as unknown as unknown[];

/**
 * Runs a write whose answer (`changes`) the caller does not need now. On SQLite that is `run`. On
 * PostgreSQL, inside a transaction, the statement is queued and goes with the transaction's next
 * round trip (the next statement whose answer is needed, or the COMMIT), the queue sent as one
 * query: a transaction of N such writes costs one round trip instead of N. A failure surfaces at
 * that later call and rolls the transaction back, as a failure of the write itself would. The
 * result's `changes` can be read once that round trip has answered (after the COMMIT).
 */
export function runDeferred<P extends unknown[]>(stmt: SqlStatement<P>, ...params: P): DeferredRun {
  const defer = (stmt as { defer?: (...p: P) => DeferredRun }).defer;
  if (defer !== undefined) return defer.apply(stmt, params);
  return { changes: stmt.run(...params).changes, rows: NO_ROWS };
}

/**
 * {@link runDeferred} for a statement that returns rows (a SELECT, or a write with RETURNING):
 * its `rows` are known once the round trip that carried it has answered.
 */
export function queryDeferred<P extends unknown[]>(
  stmt: SqlStatement<P>,
  ...params: P
): DeferredRun {
  const defer = (stmt as { defer?: (...p: P) => DeferredRun }).defer;
  if (defer !== undefined) return defer.apply(stmt, params);
  const rows = stmt.all(...params);
  return { changes: rows.length, rows };
}
