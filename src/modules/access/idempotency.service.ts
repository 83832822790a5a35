import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleDestroy,
} from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { In, IsNull, LessThanOrEqual, type DataSource, type Repository } from 'typeorm';
import { Clock } from '../../common/clock/clock.js';
import { WorldClocks } from '../worlds/world-clocks.service.js';
import { SecretBox } from '../../common/crypto/secret-box.js';
import { timesSent } from '../../common/http/raw-headers.js';
import { DomainError, validationFailed } from '../../common/errors/domain-error.js';
import { ConfigService } from '../../config/config.service.js';
import { isUniqueViolation, PLATFORM_DB } from '../../database/databases.js';
import { EffectStore } from '../trading/stores/effect.store.js';
import { appliedError, IDEMPOTENCY_TTL_MS } from '../trading/applied-keys.js';
import type { WorldName } from '../../common/environment.js';
import { WorldDatabases } from '../worlds/world-databases.service.js';
import type { WorldScoped } from '../worlds/world-scoped.js';
import { mapError } from '../../common/errors/error-mapper.js';
import { requestIdFor } from '../../common/http/request-id.js';
import { IdempotencyRecordEntity } from './entities/idempotency-record.entity.js';
import { LocalClaimants, PgClaimants, type IdempotencyClaimants } from './idempotency-claimants.js';

export { IDEMPOTENCY_TTL_MS };
/** How often an instance on a shared database settles the claims of instances that are gone. */
const ORPHAN_SWEEP_MS = 60_000;
/**
 * 1 to 255 printable ASCII characters (spaces inside, not at the ends: HTTP trims those from a
 * header value before anyone sees them).
 */
const KEY_FORMAT = /^[\x21-\x7e](?:[\x20-\x7e]{0,253}[\x21-\x7e])?$/;
const MUTATIONS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when this request runs under an Idempotency-Key and its response must be stored. */
    idempotency?: { ownerId: string; key: string; claimId: string };
  }
}

/**
 * Idempotency-Key on mutations, scoped per credential owner, kept 24 hours (the clock of the
 * request's world: the service clock, or an ephemeral world's own, see WorldClocks):
 * the same key and request replays the stored status and body with Idempotent-Replayed: true;
 * the same key with another request is 422 IDEMPOTENCY_KEY_REUSED; while the first is still
 * running, 409 IDEMPOTENCY_KEY_IN_USE. 5xx, 401, 403 and 429 answers are not stored, so a retry
 * runs again (after the step-up or the terms acceptance a 403 asked for, or the Retry-After).
 * Stored bodies are sealed (AES-256-GCM under the service key): a replayed POST /api-keys or
 * rotate answer holds a full key, which must never sit on disk in clear.
 */
@Injectable()
export class IdempotencyService
  implements OnApplicationBootstrap, OnModuleDestroy, OnApplicationShutdown
{
  private readonly repo: Repository<IdempotencyRecordEntity>;
  private readonly box: SecretBox;

  /** The engines' records of what each key's request changed (see EngineRuntime). */
  private readonly effects: WorldScoped<EffectStore>;
  private readonly log = new Logger('Idempotency');
  private sweeper: NodeJS.Timeout | null = null;
  private orphanSweeper: NodeJS.Timeout | null = null;
  /** The orphan sweep in progress, if any. */
  private sweeping: Promise<void> | null = null;
  /** This instance and its peers on the database: whose RUNNING claims are orphans. */
  readonly claimants: IdempotencyClaimants;

  constructor(
    @InjectDataSource(PLATFORM_DB) db: DataSource,
    private readonly clock: Clock,
    config: ConfigService,
    worlds: WorldDatabases,
    private readonly clocks: WorldClocks,
  ) {
    this.repo = db.getRepository(IdempotencyRecordEntity);
    this.box = new SecretBox(config.secrets.encryptionKey);
    this.effects = worlds.perWorld((db) => new EffectStore(db));
    const url = config.values.databaseUrl;
    this.claimants = url === null ? new LocalClaimants() : new PgClaimants(url, this.log);
  }

  /**
   * A request that was running when its instance stopped never got its answer stored. If it had
   * already changed an engine (its effect commits with the engine's own transaction, see
   * EngineRuntime), running it again would place the orders or move the money twice: its key
   * answers 409 IDEMPOTENT_REQUEST_APPLIED instead, naming what it did. Otherwise it never took
   * effect, and its key is released so the client's retry runs. Only the claims of instances that
   * are gone are settled (at boot, and every minute on a shared database, where an instance can
   * die while its peers run on): a peer's running request is left to answer.
   */
  async onApplicationBootstrap(): Promise<void> {
    this.forgetOldEffects();
    // Effects outlive their keys by no more than an hour while the service runs.
    this.sweeper = setInterval(() => {
      try {
        this.forgetOldEffects();
      } catch (err) {
        this.log.warn(`forgetting old idempotency effects failed: ${String(err)}`);
      }
    }, 3_600_000);
    this.sweeper.unref();
    await this.claimants.start();
    await this.settleOrphans();
    if (this.claimants instanceof PgClaimants) {
      this.orphanSweeper = setInterval(() => {
        // One sweep at a time; the one running at a shutdown is waited for (onModuleDestroy).
        if (this.sweeping !== null) return;
        this.sweeping = this.settleOrphans()
          .then(() => undefined)
          .catch((err: unknown) => {
            this.log.warn(`settling the claims of stopped instances failed: ${String(err)}`);
          })
          .finally(() => (this.sweeping = null));
      }, ORPHAN_SWEEP_MS);
      this.orphanSweeper.unref();
    }
  }

  /** Settles the RUNNING records of instances that are gone (and of records from before claims). */
  async settleOrphans(): Promise<number> {
    const running = await this.repo.findBy({ state: 'RUNNING' });
    if (running.length === 0) return 0;
    const by = [...new Set(running.map((r) => r.claimedBy).filter((b) => b !== null))];
    const gone = await this.claimants.gone(by);
    let settled = 0;
    for (const r of running) {
      if (r.claimedBy !== null && !gone.has(r.claimedBy)) continue;
      await this.settleUnanswered(r);
      settled++;
    }
    return settled;
  }

  /**
   * A key whose request got no stored answer: the stored 409 if the request changed an engine,
   * else the key is released (running the request again is safe).
   */
  private async settleUnanswered(r: IdempotencyRecordEntity): Promise<void> {
    const applied = this.appliedAnswer(r.ownerId, r.idemKey, r.createdAt);
    // That claim only: the key may have been settled and claimed again by another request since.
    const claim = {
      ownerId: r.ownerId,
      idemKey: r.idemKey,
      state: 'RUNNING' as const,
      claimId: r.claimId ?? IsNull(),
    };
    if (applied === null) await this.repo.delete(claim);
    else await this.repo.update(claim, applied);
  }

  /**
   * The stored answer for a request that changed an engine under this key (since `since`, the
   * key's current use) but was never answered: 409 IDEMPOTENT_REQUEST_APPLIED naming what it did.
   * Null if it changed nothing there (then running it again is safe).
   */
  private appliedAnswer(
    ownerId: string,
    key: string,
    since: string,
  ): Partial<IdempotencyRecordEntity> | null {
    // The owner id names the world the key's request ran in (see begin).
    const world = ownerId.slice(0, ownerId.indexOf(':')) as WorldName;
    let effect: ReturnType<EffectStore['effectOf']>;
    try {
      effect = this.effects.get(world).effectOf(ownerId, key, since);
    } catch (err) {
      // A world deleted since: nothing of it can be replayed or looked up any more.
      if (err instanceof DomainError && err.code === 'NOT_FOUND') return null;
      throw err;
    }
    if (effect === null) return null;
    const answer = mapError(
      appliedError(key, effect),
      requestIdFor({ headers: {} } as IncomingMessage),
    );
    // The first request's id is unknown here: no Idempotent-Original-Request-Id on the replay.
    const body = { error: { ...answer.body.error, request_id: null } };
    return {
      state: 'DONE',
      responseStatus: answer.status,
      responseBody: this.box.seal(JSON.stringify(body)),
      responseType: 'application/json; charset=utf-8',
    };
  }

  /**
   * Stops the sweeps with the other timers (after the HTTP drain), and waits for one in progress:
   * left running past the shutdown it would meet a closed claim session and closed databases.
   */
  async onModuleDestroy(): Promise<void> {
    if (this.sweeper !== null) clearInterval(this.sweeper);
    if (this.orphanSweeper !== null) clearInterval(this.orphanSweeper);
    this.sweeper = null;
    this.orphanSweeper = null;
    await this.sweeping;
  }

  /** The claim session ends with the other connections, once the requests are answered. */
  async onApplicationShutdown(): Promise<void> {
    await this.onModuleDestroy();
    await this.claimants.close();
  }

  /**
   * After a sandbox reset: forgets the stored answers of `userId`'s paper requests that changed
   * the paper engine (orders placed, paper money added), whose orders and ledger rows the reset
   * deleted, so the same Idempotency-Key runs its request again instead of replaying an order
   * that no longer exists. Answers that changed nothing there (a refusal, a webhook endpoint)
   * and requests still running keep their keys. Returns how many answers were forgotten.
   */
  async forgetPaperAnswers(
    userId: string,
    world: WorldName = 'test',
    forgotten: ForgottenKey = () => undefined,
  ): Promise<number> {
    const ownerId = `${world}:${userId}`;
    const keys = this.effects.get(world).keysOf(ownerId, this.since(world));
    return this.forget(ownerId, world, keys, forgotten);
  }

  /**
   * {@link forgetPaperAnswers} for a sandbox reset: the keys with effects are read inside the
   * reset's own transaction on the world's engine connection (deferred: on PostgreSQL they come
   * back with its COMMIT, no round trip of their own); answers what forgets their answers once
   * it has committed (nothing to do, and no round trip, when no key changed the engine).
   */
  stageForgetPaperAnswers(
    userId: string,
    world: WorldName = 'test',
    forgotten: ForgottenKey = () => undefined,
  ): () => Promise<number> {
    const ownerId = `${world}:${userId}`;
    const keys = this.effects.get(world).stageKeysOf(ownerId, this.since(world));
    return () => this.forget(ownerId, world, keys(), forgotten);
  }

  /** Keys of the current use are those since the idempotency window began on the world's clock. */
  private since(world: WorldName): string {
    return new Date(this.clocks.for(world).now() - IDEMPOTENCY_TTL_MS).toISOString();
  }

  private async forget(
    ownerId: string,
    world: WorldName,
    keys: string[],
    told: ForgottenKey,
  ): Promise<number> {
    let forgotten = 0;
    // Bounded IN lists: SQLite (and PostgreSQL) limit the parameters of one statement.
    for (let i = 0; i < keys.length; i += 500) {
      const done = await this.repo.find({
        where: { ownerId, state: 'DONE', idemKey: In(keys.slice(i, i + 500)) },
        select: { idemKey: true, createdAt: true },
      });
      for (const r of done) {
        // Only an answer whose own use changed the engine: a key that placed an order before an
        // earlier reset and was then used for a request that changed nothing keeps its answer.
        if (this.effects.get(world).effectOf(ownerId, r.idemKey, r.createdAt) === null) continue;
        const deleted = await this.repo.delete({
          ownerId,
          idemKey: r.idemKey,
          state: 'DONE',
          createdAt: r.createdAt,
        });
        forgotten += deleted.affected ?? 0;
        // Its effect goes too: a later use of the key that changes nothing must not look, at the
        // next reset, like one that placed an order.
        // So does the engine writer's fence of it (EngineRuntime), before the next request under
        // the key can claim it (no await in between).
        if ((deleted.affected ?? 0) > 0) {
          this.effects.get(world).forgetKey(ownerId, r.idemKey);
          told(ownerId, r.idemKey);
        }
      }
    }
    return forgotten;
  }

  /** Effects of keys that have expired (24 hours) are of no more use. */
  private forgetOldEffects(): void {
    const cutoff = new Date(this.clock.now() - IDEMPOTENCY_TTL_MS).toISOString();
    for (const [, store] of this.effects.entries()) store.forgetBefore(cutoff);
  }

  /** Returns true when the request was answered here (a replay). */
  async begin(req: FastifyRequest, reply: FastifyReply): Promise<boolean> {
    const raw = req.headers['idempotency-key'];
    if (raw === undefined || !MUTATIONS.has(req.method)) return false;
    const key = Array.isArray(raw) ? raw[0] : raw;
    // Two Idempotency-Key headers reach us joined ("k1, k2"), which the format alone would take.
    const problem =
      timesSent(req.raw.rawHeaders, 'idempotency-key') > 1
        ? 'Idempotency-Key must be given at most once'
        : KEY_FORMAT.test(key)
          ? null
          : 'Idempotency-Key must be 1 to 255 printable ASCII characters';
    if (problem !== null) {
      throw validationFailed([{ field: 'Idempotency-Key', message: problem }]);
    }
    const userId = req.svc.userId;
    if (userId === null) return false; // only authenticated mutations are scoped to an owner
    // Scoped per owner and per world: a paper request never replays a live answer, nor a
    // world's request another world's.
    const ownerId = `${req.svc.world}:${userId}`;
    const fingerprint = createHash('sha256')
      .update(`${req.method} ${req.url}\n`)
      .update(req.rawBody ?? Buffer.alloc(0))
      .digest('hex');
    const now = this.clocks.for(req.svc.world).now();
    await this.claimants.start();
    // The claim is the insert itself (the key is the primary key): of identical requests at once,
    // on this instance or any other on the database, one inserts and runs. One that loses reads
    // again and answers from the winner's record (409 while it runs, its answer once stored).
    for (let attempt = 0; ; attempt++) {
      const existing = await this.repo.findOneBy({ ownerId, idemKey: key });
      if (existing !== null && Date.parse(existing.expiresAt) > now) {
        this.answerFrom(existing, fingerprint, key, req, reply);
        return true;
      }
      if (existing !== null) {
        // Only the expired record: an identical request that read the same expired row a moment
        // earlier may have replaced it with its own RUNNING one already, and deleting that would
        // let both run (the insert below then fails for this one).
        await this.repo.delete({
          ownerId,
          idemKey: key,
          expiresAt: LessThanOrEqual(new Date(now).toISOString()),
        });
      }
      const claimId = randomBytes(12).toString('base64url');
      try {
        await this.repo.insert({
          ownerId,
          idemKey: key,
          fingerprint,
          state: 'RUNNING',
          responseStatus: null,
          responseBody: null,
          responseType: null,
          createdAt: new Date(now).toISOString(),
          expiresAt: new Date(now + IDEMPOTENCY_TTL_MS).toISOString(),
          claimId,
          claimedBy: this.claimants.instanceId,
        });
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
        // Lost the race with an identical concurrent request (or a record expired and replaced
        // in between): read the winner's record; twice lost is still running, as far as we know.
        if (attempt > 0) throw inUse(key);
        continue;
      }
      req.idempotency = { ownerId, key, claimId };
      // The engine writer tells this request's commands (a batch's legs) from another request's
      // under the same key by the claim (EngineRuntime's fence of applied keys).
      if (req.svc.credential != null)
        req.svc.credential.idempotency = { ownerId, key, claimId, claimedAt: now };
      return false;
    }
  }

  /** A live record's answer to a request under its key: replayed, or refused (throws). */
  private answerFrom(
    existing: IdempotencyRecordEntity,
    fingerprint: string,
    key: string,
    req: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (existing.fingerprint !== fingerprint) {
      throw new DomainError(
        'IDEMPOTENCY_KEY_REUSED',
        'This Idempotency-Key was used with a different request; use a new key for a new request',
        { idempotency_key: key },
      );
    }
    if (existing.state === 'RUNNING') throw inUse(key);
    void reply
      .code(existing.responseStatus ?? 200)
      .header('Idempotent-Replayed', 'true')
      .type(existing.responseType ?? 'application/json; charset=utf-8')
      .send(this.replayedBody(existing.responseBody, String(req.id), reply));
  }

  /**
   * The stored answer for a replay. A replayed error body carries this request's id, as every
   * error body does (`error.request_id` equals `X-Request-Id`); the first request's id is in
   * `Idempotent-Original-Request-Id`.
   */
  private replayedBody(stored: string | null, requestId: string, reply: FastifyReply): string {
    const body = this.storedBody(stored);
    if (!body.startsWith('{"error":')) return body;
    try {
      const parsed = JSON.parse(body) as { error: { request_id?: unknown } };
      if (typeof parsed.error.request_id === 'string') {
        reply.header('Idempotent-Original-Request-Id', parsed.error.request_id);
      }
      parsed.error.request_id = requestId;
      return JSON.stringify(parsed);
    } catch {
      return body;
    }
  }

  /** The stored answer, unsealed (rows written before bodies were sealed are plain JSON). */
  private storedBody(stored: string | null): string {
    if (stored === null) return '';
    return stored.startsWith('v1.') ? this.box.open(stored) : stored;
  }

  /** Stores the answer (onSend); drops the record for 5xx, 401, 403 and 429 so a retry runs again. */
  async finish(req: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<void> {
    const idem = req.idempotency;
    if (idem === undefined) return;
    req.idempotency = undefined;
    if (reply.statusCode >= 500) {
      // A failure after the engine committed (the answer could not be built) must not let the
      // retry run it again; a failure before it (nothing changed) must let it run.
      try {
        const record = await this.repo.findOneBy(this.claimOf(idem));
        if (record !== null) await this.settleUnanswered(record);
      } catch (err) {
        this.log.error(`settling Idempotency-Key ${idem.key} after a 5xx failed: ${String(err)}`);
      }
      return;
    }
    if (reply.statusCode === 401 || reply.statusCode === 403 || reply.statusCode === 429) {
      // Refused before it did anything, for something the caller fixes and then retries with
      // the same key (a step-up, accepting the terms, waiting out a 429's Retry-After): kept,
      // the refusal would be replayed to that retry for 24 hours. The key is released instead.
      // Settled as a 5xx is: should a refusal ever come after an engine change, the key still
      // answers 409 IDEMPOTENT_REQUEST_APPLIED rather than run the request twice.
      try {
        const record = await this.repo.findOneBy(this.claimOf(idem));
        if (record !== null) await this.settleUnanswered(record);
      } catch (err) {
        this.log.error(`releasing Idempotency-Key ${idem.key} failed: ${String(err)}`);
      }
      return;
    }
    const body =
      typeof payload === 'string'
        ? payload
        : Buffer.isBuffer(payload)
          ? payload.toString('utf8')
          : '';
    const type = reply.getHeader('content-type');
    try {
      const stored = await this.repo.update(
        { ...this.claimOf(idem), state: 'RUNNING' },
        {
          state: 'DONE',
          responseStatus: reply.statusCode,
          responseBody: this.box.seal(body),
          responseType: typeof type === 'string' ? type : null,
        },
      );
      if (stored.affected === 0) {
        // Settled by a peer that took this instance for gone: never expected (see PgClaimants).
        this.log.error(
          `the answer under Idempotency-Key ${idem.key} was not stored: its claim was settled while the request ran`,
        );
      }
    } catch (err) {
      // The request took effect: the client still gets its answer. The key stays RUNNING (a
      // retry is 409 IDEMPOTENCY_KEY_IN_USE) until this instance is gone and its claims are
      // settled from the engine (at the next boot, or by a peer on a shared database).
      this.log.error(
        `the answer under Idempotency-Key ${idem.key} could not be stored: ${
          err instanceof Error ? err.message : String(err)
        }`,
      );
    }
  }

  /** The record of this request's own claim (not a later claim of the same key). */
  private claimOf(idem: { ownerId: string; key: string; claimId: string }): {
    ownerId: string;
    idemKey: string;
    claimId: string;
  } {
    return { ownerId: idem.ownerId, idemKey: idem.key, claimId: idem.claimId };
  }
}

/** Told of each key whose answer (and engine effect) a sandbox reset forgot. */
export type ForgottenKey = (ownerId: string, key: string) => void;

function inUse(key: string): DomainError {
  return new DomainError(
    'IDEMPOTENCY_KEY_IN_USE',
    'A request with this Idempotency-Key is still running; retry later',
    { idempotency_key: key },
  );
}
