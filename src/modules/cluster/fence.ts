import type pg from 'pg';
import { FencedError } from './cluster-errors.js';

/**
 * The fence: the first statement of every commit transaction of a world's writer. It touches
 * the world's cluster_writers row only if the row still holds the writer's epoch:
 *
 * - 0 rows: a newer writer took over (it incremented the epoch): FencedError, and the
 *   transaction rolls back, so a deposed writer never commits after its successor began.
 * - 1 row: the row stays locked until this transaction ends, so the successor's increment
 *   (WriterElection) waits for this commit; the successor restores its engine after that,
 *   from a database that holds it. Either way the two writers' commits never interleave.
 *
 * The table is schema-qualified: the engine's transactions run with their own schema (live,
 * paper, a world's) on the search_path, and cluster_writers lives in the platform schema of the
 * same database. PostgreSQL only: on SQLite one process is the only writer and runs no fence.
 */
export interface FenceStatement {
  sql: string;
  params: [world: string, epoch: number];
}

function table(schema: string): string {
  return `"${schema}".cluster_writers`;
}

/**
 * The fence as text with `?` placeholders and its parameters, for the synchronous SQL port
 * (pgport's SqlConnection: `prepare(sql).run(...params)` → `{ changes }`), whose dialect layer
 * numbers the placeholders for PostgreSQL. Prepare it once per connection.
 */
export function fenceStatement(world: string, epoch: number, schema = 'platform'): FenceStatement {
  return {
    sql: `UPDATE ${table(schema)} SET epoch = epoch WHERE world = ? AND epoch = ?`,
    params: [world, epoch],
  };
}

/** What a refused deferred fence fails with (see {@link deferredFenceStatement}). */
const REFUSED = 'writer fenced off';

/**
 * The fence as one statement that needs no answer read: it fails (SQLSTATE 22P02, a cast of
 * {@link REFUSED} to an integer) when the row does not hold the writer's epoch, which aborts the
 * transaction. So it can be deferred (runDeferred) and go with the COMMIT in one round trip,
 * even one sent without waiting (the pipelined group commit); {@link isFenceRefusal} recognises
 * its failure. The cast is of a subquery's value, which PostgreSQL does not fold at plan time.
 */
export function deferredFenceStatement(
  world: string,
  epoch: number,
  schema = 'platform',
): FenceStatement {
  return {
    sql:
      `WITH f AS (UPDATE ${table(schema)} SET epoch = epoch WHERE world = ? AND epoch = ? RETURNING 1) ` +
      `SELECT CAST((SELECT '${REFUSED}' WHERE NOT EXISTS (SELECT 1 FROM f)) AS integer) AS refused`,
    params: [world, epoch],
  };
}

/** Whether a commit's error is the refusal of {@link deferredFenceStatement}. */
export function isFenceRefusal(err: unknown): boolean {
  return (
    err instanceof Error &&
    (err as { code?: unknown }).code === '22P02' &&
    err.message.includes(REFUSED)
  );
}

/** What the synchronous port offers (a subset of better-sqlite3's Database, as pgport's port). */
export interface SyncRunner {
  prepare(sql: string): { run(...params: unknown[]): { changes: number } };
}

/** Runs the fence inside the caller's transaction on the synchronous port; throws FencedError. */
export function fenceSync(conn: SyncRunner, world: string, epoch: number, schema?: string): void {
  const f = fenceStatement(world, epoch, schema);
  if (conn.prepare(f.sql).run(...f.params).changes !== 1) throw new FencedError(world, epoch);
}

/**
 * Runs the fence on a `pg` client inside the caller's transaction (after its BEGIN); throws
 * FencedError. The caller rolls back on the throw, as on any error of its transaction.
 */
export async function fence(
  client: Pick<pg.ClientBase, 'query'>,
  world: string,
  epoch: number,
  schema = 'platform',
): Promise<void> {
  const r = await client.query(
    `UPDATE ${table(schema)} SET epoch = epoch WHERE world = $1 AND epoch = $2`,
    [world, epoch],
  );
  if (r.rowCount !== 1) throw new FencedError(world, epoch);
}
