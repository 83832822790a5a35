import type { Logger } from '@nestjs/common';
import type pg from 'pg';
import { pgDriver } from '../../common/sql/pg-driver.js';
import type { LockKey } from './lock-key.js';

export type ClusterLog = Pick<Logger, 'log' | 'warn' | 'error'>;

/** How long close() waits for the connection to end (a dead socket's end() may never settle). */
const CLOSE_WAIT_MS = 1_000;

export interface LockSessionOptions {
  databaseUrl: string;
  /** Shown in pg_stat_activity, so an operator can tell which instance holds what. */
  applicationName: string;
  /**
   * Longest a statement of the session may take (the heartbeat, a lock attempt, the epoch
   * increment): past it the session is taken as lost and dropped, so a partitioned writer steps
   * down instead of waiting on a socket the kernel has not declared dead yet.
   */
  queryTimeoutMs: number;
  log: ClusterLog;
}

/**
 * The dedicated PostgreSQL session whose advisory locks make an instance a world's writer or a
 * lease's holder. Session locks live exactly as long as the backend: if the process dies or the
 * connection drops, PostgreSQL releases them, which is what lets another instance take over. So
 * the session is never pooled, and the moment it fails every lock is taken as lost (onLost) —
 * even where PostgreSQL may still hold it a little longer, stepping down early is the safe side.
 */
export class LockSession {
  private client: pg.Client | null = null;
  private connecting: Promise<pg.Client> | null = null;
  private readonly lost: ((err: unknown) => void)[] = [];
  private pid: number | null = null;
  /** Counts sessions: a lock taken in an older one is gone with it. */
  private generationNo = 0;
  private closed = false;
  /**
   * The statements sent so far, settled or not: each waits for the one before it. Callers
   * overlap (the heartbeat, a campaign, a lease, many worlds' work locks at once), and pg
   * deprecates a query sent while its client runs another (it queued them itself; pg 9 will not).
   */
  private tail: Promise<unknown> = Promise.resolve();

  constructor(private readonly opts: LockSessionOptions) {}

  get connected(): boolean {
    return this.client !== null;
  }

  get generation(): number {
    return this.generationNo;
  }

  /** The backend holding the locks (pg_stat_activity.pid), null while disconnected. */
  get backendPid(): number | null {
    return this.pid;
  }

  /** Called once per lost session, synchronously with the error that ended it. */
  onLost(cb: (err: unknown) => void): void {
    this.lost.push(cb);
  }

  /** The connected session, connecting first if needed (one attempt at a time). */
  async ensure(): Promise<pg.Client> {
    if (this.closed) throw new Error('the lock session is closed');
    if (this.client !== null) return this.client;
    this.connecting ??= this.connect().finally(() => (this.connecting = null));
    return this.connecting;
  }

  private async connect(): Promise<pg.Client> {
    const client = new (pgDriver().Client)({
      connectionString: this.opts.databaseUrl,
      application_name: this.opts.applicationName,
      // No query_timeout: pg's fires when a main thread held past it lets its timer run, even
      // if the answer came in time (see {@link deadline}).
      connectionTimeoutMillis: this.opts.queryTimeoutMs,
      keepAlive: true,
    });
    // Until connected, a failure rejects connect() itself; afterwards it ends the session.
    client.on('error', (err) => void this.drop(client, err));
    client.on('end', () => void this.drop(client, new Error('the lock session ended')));
    await client.connect();
    try {
      const r = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      if (this.closed) throw new Error('the lock session is closed');
      this.pid = r.rows[0].pid;
    } catch (err) {
      void client.end().catch(() => undefined);
      throw err;
    }
    this.client = client;
    this.generationNo++;
    return client;
  }

  /** Runs one statement on the session; a failure of the session itself drops it. */
  async query<R extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<R[]> {
    const client = await this.ensure();
    const sent = this.tail.then(() => this.deadline(client.query<R>(sql, params)));
    this.tail = sent.catch(() => undefined);
    try {
      return (await sent).rows;
    } catch (err) {
      if (sessionFailure(err)) void this.drop(client, err);
      throw err;
    }
  }

  /**
   * The statement's answer, or a timeout (a session failure) when none came within
   * queryTimeoutMs. The verdict waits for the event loop's next poll phase: a timer runs before
   * the sockets are read, so after a synchronous stretch of the main thread longer than the
   * timeout (a long commit on the synchronous SQL port under load) a plain timer would give the
   * session up although PostgreSQL's answer was waiting in the socket, and step this instance
   * down from every world it writes (503 WRITER_UNAVAILABLE for its requests until the next
   * round). Only an answer still missing after the sockets were read is a timeout.
   */
  private deadline<T>(answer: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const timer = setTimeout(
        () =>
          setImmediate(() => {
            if (settled) return;
            settled = true;
            answer.catch(() => undefined); // ended with the session it is dropped with
            reject(new Error('Query read timeout'));
          }),
        this.opts.queryTimeoutMs,
      );
      answer.then(
        (v) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(v);
        },
        (err: unknown) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          reject(err instanceof Error ? err : new Error(String(err)));
        },
      );
    });
  }

  async tryLock(key: LockKey): Promise<boolean> {
    const rows = await this.query<{ locked: boolean }>(
      'SELECT pg_try_advisory_lock($1, $2) AS locked',
      [key[0], key[1]],
    );
    return rows[0].locked;
  }

  async unlock(key: LockKey): Promise<void> {
    await this.query('SELECT pg_advisory_unlock($1, $2)', [key[0], key[1]]);
  }

  /**
   * Ends the session: PostgreSQL releases every lock it holds. Settles once the connection has
   * ended (so a stopped app leaves no socket behind), or after CLOSE_WAIT_MS over a dead one.
   */
  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    if (client === null) return;
    const ended = this.drop(client, new Error('the lock session was closed'));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([ended, new Promise((r) => (timer = setTimeout(r, CLOSE_WAIT_MS)))]);
    clearTimeout(timer);
  }

  private drop(client: pg.Client, err: unknown): Promise<void> {
    if (this.client !== client) return Promise.resolve();
    this.client = null;
    this.pid = null;
    // Not awaited here: over a dead socket end() may never settle; the socket goes either way.
    const ended = client.end().catch(() => undefined);
    if (!this.closed) {
      this.opts.log.warn(
        `the cluster lock session was lost (${err instanceof Error ? err.message : String(err)}); every writer role and lease it held is given up`,
      );
    }
    for (const cb of this.lost) cb(err);
    return ended;
  }
}

/**
 * An error that says the session, not the statement, failed: no SQLSTATE at all (a socket error,
 * pg's query timeout), a connection exception (08xxx) or an operator intervention (57xxx: the
 * backend terminated, the server shutting down). A statement's own error (a missing table) is not.
 */
function sessionFailure(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return true;
  return code.startsWith('08') || code.startsWith('57');
}
