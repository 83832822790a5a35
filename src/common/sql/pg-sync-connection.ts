import { PgSqlError, PgSyncBridge, type PgReply } from './pg-sync-bridge.js';
import { toPostgres } from './postgres-dialect.js';
import type {
  DeferredRun,
  SqlCommitInFlight,
  SqlConnection,
  SqlRunResult,
  SqlStatement,
  SqlTransaction,
  SqlTransactionBody,
} from './sql-connection.js';

/** Waits at most this long for a row lock (SQLite's busy_timeout is 5000 ms too). */
const LOCK_TIMEOUT_MS = 5000;

let statementNames = 0;

/**
 * The synchronous port on PostgreSQL: one `pg.Client` in the worker thread (PgSyncBridge), each
 * call a blocking round trip to it. SQL is written for SQLite and carried over by `toPostgres`
 * once per prepare; each statement is a named prepared statement of its client (parsed and
 * planned once). `schema` becomes the session's search_path, so unqualified tables are that
 * schema's.
 */
export class PgSyncConnection implements SqlConnection {
  /**
   * Requests every connection of the process has sent to the worker: each a round trip to the
   * server (blocking ones and the pipelined COMMITs alike). Tests and benches read it to count
   * what a request costs on PostgreSQL.
   */
  static roundTrips = 0;
  readonly dialect = 'postgres' as const;
  private readonly bridge = PgSyncBridge.instance();
  private readonly cid: number;
  private depth = 0;
  /**
   * What is not yet sent, in order: BEGIN (or a SAVEPOINT), which goes with the transaction's
   * first statement, and statements deferred inside a transaction ({@link runDeferred}), which go
   * with the next round trip (the worker sends the lot as one query: one round trip, not one each).
   */
  private pending: Pending[] = [];
  private closed = false;

  constructor(
    /** The database it connects to (an export's worker thread opens its own client on it). */
    readonly url: string,
    /** The schema that is its search_path, if any. */
    readonly schema?: string,
  ) {
    this.cid = this.bridge.connectionId();
    const options = [`-c lock_timeout=${LOCK_TIMEOUT_MS}`];
    if (schema !== undefined) options.push(`-c search_path=${quoteIdent(schema)}`);
    // Connecting is not waited for here: the worker runs a connection's requests in order, so its
    // first statement waits for it (and fails with its error). The connections a boot opens
    // connect side by side, beside the rest of the boot, instead of blocking the thread in turn
    // (a connection costs PostgreSQL a backend: 5-10 ms, over 100 ms on a loaded machine).
    this.bridge
      .submit({ cid: this.cid, op: 'open', url, options: options.join(' ') })
      .catch(() => undefined);
  }

  get inTransaction(): boolean {
    return this.depth > 0;
  }

  prepare<P extends unknown[] | object = unknown[], R = unknown>(
    sql: string,
  ): P extends unknown[] ? SqlStatement<P, R> : SqlStatement<[P], R> {
    const { text, names } = toPostgres(sql);
    return new PgSyncStatement(this, sql, text, names) as never;
  }

  exec(sql: string): this {
    this.send({ op: 'exec', text: toPostgres(sql).text }, sql);
    return this;
  }

  /**
   * @internal A statement whose answer the caller does not need, inside a transaction: queued to
   * go with the next round trip (its failure then fails that call, at the latest the COMMIT,
   * which rolls the transaction back). Outside a transaction it runs at once.
   */
  defer(text: string, values: unknown[], sql: string): DeferredRun {
    if (this.depth === 0) {
      const r = this.send({ op: 'query', text, values }, sql);
      return answered({ rows: r.rows ?? [], changes: r.changes ?? 0 });
    }
    if (this.closed) throw new TypeError('The database connection is not open');
    const result = new PendingResult(sql);
    this.pending.push({ text, values, sql, result });
    return result;
  }

  /** @internal One statement through the worker (with a transaction's deferred BEGIN). */
  query(name: string, text: string, values: unknown[], raw: boolean, sql: string): PgReply {
    return this.send({ op: 'query', name, text, values, rowMode: raw ? 'array' : undefined }, sql);
  }

  /**
   * A batch of statements in one transaction, answered without blocking the thread, each
   * statement's row count returned (the engine's group commit uses {@link commitAsync}, which
   * sends the writes a transaction deferred).
   */
  async submit(
    statements: { sql: string; params?: unknown[] | Record<string, unknown> }[],
  ): Promise<SqlRunResult[]> {
    const prepared = statements.map((s) => {
      const { text, names } = toPostgres(s.sql);
      const args = s.params === undefined ? [] : [s.params];
      return { text, values: bindValues(names, args, s.sql) };
    });
    PgSyncConnection.roundTrips++;
    const reply = await this.bridge.submit({ cid: this.cid, op: 'batch', statements: prepared });
    return reply.results!.map((r) => ({ changes: r.changes }));
  }

  transaction<F extends SqlTransactionBody>(fn: F): SqlTransaction<F> {
    const run = (...args: unknown[]): unknown => {
      const level = this.depth;
      const start = level === 0 ? 'BEGIN' : `SAVEPOINT sp${level}`;
      const undo = level === 0 ? ['ROLLBACK'] : [`ROLLBACK TO sp${level}`, `RELEASE sp${level}`];
      this.pending.push(start);
      this.depth = level + 1;
      let result: unknown;
      try {
        result = fn(...args);
        if (isThenable(result)) throw new TypeError('Transaction function cannot return a promise');
      } catch (err) {
        this.depth = level;
        this.rollback(start, undo);
        throw err;
      }
      this.depth = level;
      try {
        this.finish(start, level === 0 ? ['COMMIT'] : [`RELEASE sp${level}`]);
      } catch (err) {
        // A deferred statement (or the COMMIT) failed: the transaction is aborted, undo it.
        this.rollback(start, undo, true);
        throw err;
      }
      return result;
    };
    const tx = run as unknown as SqlTransaction<F>;
    tx.immediate = run as SqlTransaction<F>['immediate'];
    return tx;
  }

  /**
   * A top-level transaction whose end does not block: `fn` runs now (what it defers is queued,
   * what needs an answer goes at once, as in {@link transaction}), then the queue and the COMMIT
   * go as one request whose answer the caller joins later. The worker rolls the transaction back
   * if any of it fails, before this connection's next request runs; requests sent meanwhile run
   * after the COMMIT, so they see it (or its rollback).
   */
  commitAsync(fn: () => void): SqlCommitInFlight {
    if (this.depth !== 0) throw new TypeError('commitAsync inside a transaction');
    if (this.closed) throw new TypeError('The database connection is not open');
    this.pending.push('BEGIN');
    this.depth = 1;
    try {
      fn();
    } catch (err) {
      this.depth = 0;
      this.rollback('BEGIN', ['ROLLBACK']);
      throw err;
    }
    this.depth = 0;
    if (this.pending[this.pending.length - 1] === 'BEGIN') {
      // Nothing ran in it: nothing to send.
      this.pending.pop();
      return { answered: Promise.resolve(), join: () => undefined };
    }
    const sent = this.pending;
    const before = sent.map((p) =>
      typeof p === 'string' ? p : { text: p.text, values: p.values },
    );
    this.pending = [];
    PgSyncConnection.roundTrips++;
    const flight = this.bridge.start({
      cid: this.cid,
      op: 'exec',
      text: 'COMMIT',
      before,
      atomic: true,
    });
    return {
      answered: flight.answered,
      join: () => {
        const r = this.bridge.join(flight);
        if (!r.ok) throw new PgSqlError(r.error!, 'COMMIT');
        deliver(sent, r);
      },
    };
  }

  close(): this {
    if (this.closed) return this;
    this.closed = true;
    this.bridge.call({ cid: this.cid, op: 'close' });
    return this;
  }

  /**
   * Ends a transaction or savepoint. When its BEGIN (SAVEPOINT) is still the last thing pending,
   * nothing ran in it and nothing is sent; otherwise what is pending (statements deferred in it)
   * goes with the end, one round trip.
   */
  private finish(start: string, statements: string[]): void {
    if (this.pending[this.pending.length - 1] === start) {
      this.pending.pop();
      return;
    }
    this.send({ op: 'exec', text: statements.join(';') }, statements.join(';'));
  }

  /**
   * Undoes a transaction or savepoint. Whatever is pending was queued inside it (a send flushes
   * everything): when its BEGIN (SAVEPOINT) is still pending, nothing of it reached the server
   * and dropping the queue from there undoes it; otherwise the queue is dropped and the undo sent.
   * `quiet`: the error being rethrown is the caller's, not this one's.
   */
  private rollback(start: string, undo: string[], quiet = false): void {
    const at = this.pending.lastIndexOf(start);
    if (at >= 0) {
      this.pending.length = at;
      return;
    }
    this.pending = [];
    try {
      for (const sql of undo) {
        PgSyncConnection.roundTrips++;
        this.bridge.call({ cid: this.cid, op: 'exec', text: sql }, sql);
      }
    } catch (err) {
      if (!quiet) throw err;
    }
  }

  private send(request: Record<string, unknown> & { op: string }, sql: string): PgReply {
    if (this.closed) throw new TypeError('The database connection is not open');
    const sent = this.pending;
    const before = sent.map((p) =>
      typeof p === 'string' ? p : { text: p.text, values: p.values },
    );
    if (before.length > 0) this.pending = [];
    PgSyncConnection.roundTrips++;
    const reply = this.bridge.call({ ...request, cid: this.cid, before }, sql);
    deliver(sent, reply);
    return reply;
  }
}

/** Hands each deferred statement of a request its result from the reply. */
function deliver(sent: readonly Pending[], reply: PgReply): void {
  const answers = reply.deferred;
  if (answers === undefined) return;
  sent.forEach((p, i) => {
    if (typeof p !== 'string' && answers[i] != null) p.result.settle(answers[i]);
  });
}

/** The result of a statement whose round trip has been made. */
function answered(r: { rows: unknown[]; changes: number }): DeferredRun {
  const done = new PendingResult('');
  done.settle(r);
  return done;
}

/** A deferred statement's result, known once the round trip that carried it has answered. */
class PendingResult implements DeferredRun {
  private answer: { rows: unknown[]; changes: number } | undefined;

  constructor(private readonly sql: string) {}

  settle(r: { rows: unknown[]; changes: number }): void {
    this.answer = r;
  }

  get sent(): boolean {
    return this.answer !== undefined;
  }

  get changes(): number {
    return this.known().changes;
  }

  get rows(): unknown[] {
    return this.known().rows;
  }

  private known(): { rows: unknown[]; changes: number } {
    if (this.answer === undefined) {
      throw new Error(`A deferred statement's result was read before it was sent: ${this.sql}`);
    }
    return this.answer;
  }
}

/** A statement or transaction control not yet sent (see PgSyncConnection.pending). */
type Pending = string | { text: string; values: unknown[]; sql: string; result: PendingResult };

/** A prepared statement: SQLite text translated once, values bound per call as better-sqlite3 does. */
class PgSyncStatement implements SqlStatement {
  private readonly name = `s${++statementNames}`;
  private rawRows = false;

  constructor(
    private readonly conn: PgSyncConnection,
    private readonly sql: string,
    private readonly text: string,
    private readonly names: readonly string[] | null,
  ) {}

  run(...params: unknown[]): SqlRunResult {
    const r = this.exec(params);
    return { changes: r.changes ?? 0 };
  }

  /** See {@link runDeferred}: queued to go with the transaction's next round trip. */
  defer(...params: unknown[]): DeferredRun {
    return this.conn.defer(this.text, bindValues(this.names, params, this.sql), this.sql);
  }

  get(...params: unknown[]): unknown {
    return this.exec(params).rows![0];
  }

  all(...params: unknown[]): unknown[] {
    return this.exec(params).rows!;
  }

  raw(toggle = true): this {
    this.rawRows = toggle;
    return this;
  }

  private exec(params: unknown[]): PgReply {
    const values = bindValues(this.names, params, this.sql);
    return this.conn.query(this.name, this.text, values, this.rawRows, this.sql);
  }
}

/**
 * better-sqlite3's binding: positional values in order (arrays spread), or the keys of one
 * object for named parameters (a missing key is an error, as there).
 */
function bindValues(names: readonly string[] | null, params: unknown[], sql: string): unknown[] {
  if (names === null) {
    const out: unknown[] = [];
    for (const p of params) {
      if (Array.isArray(p)) for (const v of p) out.push(toPg(v));
      else out.push(toPg(p));
    }
    return out;
  }
  const bag = params.find(isBag) as Record<string, unknown> | undefined;
  return names.map((n) => {
    if (bag === undefined || !(n in bag)) {
      throw new RangeError(`Missing named parameter "${n}" in: ${sql.slice(0, 200)}`);
    }
    return toPg(bag[n]);
  });
}

function isBag(p: unknown): boolean {
  return (
    typeof p === 'object' &&
    p !== null &&
    !Array.isArray(p) &&
    !Buffer.isBuffer(p) &&
    !(p instanceof Date)
  );
}

function toPg(v: unknown): unknown {
  if (v === undefined) return null;
  if (typeof v === 'bigint') return v.toString();
  return v;
}

function isThenable(v: unknown): boolean {
  return typeof (v as { then?: unknown } | null)?.then === 'function';
}

/** A PostgreSQL identifier, quoted (a schema name in a session's search_path). */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
