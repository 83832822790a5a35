import { createRequire } from 'node:module';
import {
  MessageChannel,
  receiveMessageOnPort,
  Worker,
  type MessagePort,
} from 'node:worker_threads';
import { PG_WORKER_SOURCE } from './pg-worker-source.js';

/** A reply of the worker (see pg-worker-source.ts). */
export interface PgReply {
  id: number;
  ok: boolean;
  rows?: unknown[];
  changes?: number;
  results?: { rows: unknown[]; changes: number }[];
  /**
   * The result of each entry of the request's `before` (statements a transaction deferred), in
   * order; null for transaction control (BEGIN, SAVEPOINT).
   */
  deferred?: ({ rows: unknown[]; changes: number } | null)[];
  error?: PgErrorFields;
}

export interface PgErrorFields {
  message: string;
  code?: string;
  detail?: string;
  constraint?: string;
  table?: string;
  column?: string;
  schema?: string;
  severity?: string;
}

/** A request sent without blocking (see PgSyncBridge.start). */
export interface PgFlight {
  readonly id: number;
  /** Set once the worker's reply has been taken off the port. */
  reply: PgReply | undefined;
  /** Settles (never rejects) once `reply` is set. */
  readonly answered: Promise<void>;
}

/** A request without its id (the bridge numbers it). */
export type PgRequest = { cid: number; op: string } & Record<string, unknown>;

/** An error PostgreSQL (or the worker) answered; `code` is PostgreSQL's SQLSTATE (23505...). */
export class PgSqlError extends Error {
  readonly code: string | undefined;
  readonly detail: string | undefined;
  readonly constraint: string | undefined;

  constructor(fields: PgErrorFields, sql?: string) {
    super(sql === undefined ? fields.message : `${fields.message} (in: ${sql.slice(0, 200)})`);
    this.name = 'PgSqlError';
    this.code = fields.code;
    this.detail = fields.detail;
    this.constraint = fields.constraint;
  }
}

/** How long a synchronous call waits for the worker before giving up on it. */
const SYNC_DEADLINE_MS = 60_000;

/**
 * The worker thread that holds the `pg` clients, and the synchronous call into it: the caller
 * posts a request, blocks in Atomics.wait until the worker has answered and bumped the shared
 * counter, and takes the answer off its port with receiveMessageOnPort (the synckit pattern).
 * Replies are matched by id; one that is not the waiting caller's (an async batch's) is handed to
 * its promise or kept until asked for, so async requests can run beside synchronous ones.
 */
export class PgSyncBridge {
  private static shared: PgSyncBridge | null = null;

  /** One worker per process, shared by every PgSyncConnection (one pg.Client each). */
  static instance(): PgSyncBridge {
    PgSyncBridge.shared ??= new PgSyncBridge();
    return PgSyncBridge.shared;
  }

  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly counter: Int32Array;
  private nextId = 0;
  private nextCid = 0;
  private readonly stash = new Map<number, PgReply>();
  private readonly waiting = new Map<number, (r: PgReply) => void>();
  private exited: string | null = null;

  private constructor() {
    const flag = new SharedArrayBuffer(4);
    this.counter = new Int32Array(flag);
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    const driver = createRequire(import.meta.url).resolve('pg');
    this.worker = new Worker(PG_WORKER_SOURCE, {
      eval: true,
      workerData: { driver, port: port2, flag },
      transferList: [port2],
    });
    // Neither keeps the process alive: connections are closed at shutdown, a crash must not hang.
    this.worker.unref();
    this.worker.on('error', (err) => (this.exited = `the worker failed: ${err.message}`));
    this.worker.on('exit', (code) => (this.exited ??= `the worker exited (${code})`));
    this.port.on('message', (r: PgReply) => this.deliver(r));
    this.port.unref();
  }

  /** A fresh connection id. */
  connectionId(): number {
    return ++this.nextCid;
  }

  /** Sends a request and blocks until its reply; throws PgSqlError when it failed. */
  call(request: PgRequest, sql?: string): PgReply {
    const id = this.post(request);
    const reply = this.wait(id);
    if (!reply.ok) throw new PgSqlError(reply.error!, sql);
    return reply;
  }

  /** Sends a request and resolves with its reply without blocking the thread. */
  submit(request: PgRequest): Promise<PgReply> {
    const flight = this.start(request);
    return flight.answered.then(() => {
      const r = flight.reply!;
      if (!r.ok) throw new PgSqlError(r.error!, String(request.text ?? ''));
      return r;
    });
  }

  /**
   * Sends a request without blocking the thread. Its reply is set on the returned flight as soon
   * as it is taken off the port (by the port's message event, or by a synchronous call waiting
   * for its own reply meanwhile), and `answered` then settles; {@link join} blocks for it.
   */
  start(request: PgRequest): PgFlight {
    const id = this.post(request);
    let answer!: () => void;
    const flight: PgFlight = {
      id,
      reply: undefined,
      answered: new Promise<void>((resolve) => (answer = resolve)),
    };
    this.waiting.set(id, (r) => {
      flight.reply = r;
      answer();
    });
    return flight;
  }

  /** Blocks until a started request has answered, and returns its reply (ok or not). */
  join(flight: PgFlight): PgReply {
    if (flight.reply === undefined) this.deliver(this.wait(flight.id));
    return flight.reply!;
  }

  private post(request: PgRequest): number {
    if (this.exited !== null) throw new Error(`PostgreSQL connection unusable: ${this.exited}`);
    const id = ++this.nextId;
    this.port.postMessage({ ...request, id });
    return id;
  }

  private wait(id: number): PgReply {
    const deadline = Date.now() + SYNC_DEADLINE_MS;
    for (;;) {
      const kept = this.stash.get(id);
      if (kept !== undefined) {
        this.stash.delete(id);
        return kept;
      }
      // The counter is read before the port: a reply posted after this read bumps it, so the
      // wait below returns at once instead of sleeping past it.
      const seen = Atomics.load(this.counter, 0);
      const got = receiveMessageOnPort(this.port);
      if (got !== undefined) {
        const r = got.message as PgReply;
        if (r.id === id) return r;
        this.deliver(r);
        continue;
      }
      const left = deadline - Date.now();
      if (left <= 0 || this.exited !== null) {
        throw new Error(
          `PostgreSQL worker gave no answer in ${SYNC_DEADLINE_MS} ms${this.exited === null ? '' : `: ${this.exited}`}`,
        );
      }
      Atomics.wait(this.counter, 0, seen, Math.min(left, 1000));
    }
  }

  private deliver(r: PgReply): void {
    const resolve = this.waiting.get(r.id);
    if (resolve === undefined) {
      this.stash.set(r.id, r);
      return;
    }
    this.waiting.delete(r.id);
    resolve(r);
  }
}
