import { createHash } from 'node:crypto';
import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LessThanOrEqual, type DataSource, type Repository } from 'typeorm';
import { Clock } from '../../common/clock/clock.js';
import { SecretBox } from '../../common/crypto/secret-box.js';
import { DomainError } from '../../common/errors/domain-error.js';
import { ConfigService } from '../../config/config.service.js';
import { PLATFORM_DB } from '../../database/databases.js';
import { IdempotencyRecordEntity } from './entities/idempotency-record.entity.js';

export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;
const KEY_FORMAT = /^[\x21-\x7e]{1,255}$/;
const MUTATIONS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when this request runs under an Idempotency-Key and its response must be stored. */
    idempotency?: { ownerId: string; key: string };
  }
}

/**
 * Idempotency-Key on mutations, scoped per credential owner, kept 24 hours (service Clock):
 * the same key and request replays the stored status and body with Idempotent-Replayed: true;
 * the same key with another request is 422 IDEMPOTENCY_KEY_REUSED; while the first is still
 * running, 409 IDEMPOTENCY_KEY_IN_USE. 5xx answers are not stored, so a retry runs again.
 * Stored bodies are sealed (AES-256-GCM under the service key): a replayed POST /api-keys or
 * rotate answer holds a full key, which must never sit on disk in clear.
 */
@Injectable()
export class IdempotencyService implements OnApplicationBootstrap {
  private readonly repo: Repository<IdempotencyRecordEntity>;
  private readonly box: SecretBox;

  constructor(
    @InjectDataSource(PLATFORM_DB) db: DataSource,
    private readonly clock: Clock,
    config: ConfigService,
  ) {
    this.repo = db.getRepository(IdempotencyRecordEntity);
    this.box = new SecretBox(config.secrets.encryptionKey);
  }

  /**
   * A request that was running when the process stopped never got its answer stored; its key is
   * released so the client's retry runs (order placement has client_order_id as a second guard).
   */
  async onApplicationBootstrap(): Promise<void> {
    await this.repo.delete({ state: 'RUNNING' });
  }

  /** Returns true when the request was answered here (a replay). */
  async begin(req: FastifyRequest, reply: FastifyReply): Promise<boolean> {
    const raw = req.headers['idempotency-key'];
    if (raw === undefined || !MUTATIONS.has(req.method)) return false;
    const key = Array.isArray(raw) ? raw[0] : raw;
    if (!KEY_FORMAT.test(key)) {
      throw new DomainError(
        'VALIDATION_FAILED',
        'Invalid request: Idempotency-Key: 1 to 255 printable ASCII characters',
        {
          fields: [{ field: 'Idempotency-Key', message: '1 to 255 printable ASCII characters' }],
        },
      );
    }
    const userId = req.svc.userId;
    if (userId === null) return false; // only authenticated mutations are scoped to an owner
    // Scoped per owner and per environment: a paper request never replays a live answer.
    const ownerId = `${req.svc.environment}:${userId}`;
    const fingerprint = createHash('sha256')
      .update(`${req.method} ${req.url}\n`)
      .update(req.rawBody ?? Buffer.alloc(0))
      .digest('hex');
    const now = this.clock.now();
    const existing = await this.repo.findOneBy({ ownerId, idemKey: key });
    if (existing !== null && Date.parse(existing.expiresAt) > now) {
      if (existing.fingerprint !== fingerprint) {
        throw new DomainError(
          'IDEMPOTENCY_KEY_REUSED',
          'This Idempotency-Key was used with a different request; use a new key for a new request',
          { idempotency_key: key },
        );
      }
      if (existing.state === 'RUNNING') {
        throw new DomainError(
          'IDEMPOTENCY_KEY_IN_USE',
          'A request with this Idempotency-Key is still running; retry later',
          {
            idempotency_key: key,
          },
        );
      }
      void reply
        .code(existing.responseStatus ?? 200)
        .header('Idempotent-Replayed', 'true')
        .type(existing.responseType ?? 'application/json; charset=utf-8')
        .send(this.storedBody(existing.responseBody));
      return true;
    }
    if (existing !== null) {
      // Only the expired record: an identical request that read the same expired row a moment
      // earlier may have replaced it with its own RUNNING one already, and deleting that would
      // let both run (the insert below then fails for this one: IDEMPOTENCY_KEY_IN_USE).
      await this.repo.delete({
        ownerId,
        idemKey: key,
        expiresAt: LessThanOrEqual(new Date(now).toISOString()),
      });
    }
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
      });
    } catch {
      // Lost a race with an identical concurrent request.
      throw new DomainError(
        'IDEMPOTENCY_KEY_IN_USE',
        'A request with this Idempotency-Key is still running; retry later',
        {
          idempotency_key: key,
        },
      );
    }
    req.idempotency = { ownerId, key };
    return false;
  }

  /** The stored answer, unsealed (rows written before bodies were sealed are plain JSON). */
  private storedBody(stored: string | null): string {
    if (stored === null) return '';
    return stored.startsWith('v1.') ? this.box.open(stored) : stored;
  }

  /** Stores the answer (onSend); drops the record for 5xx so a retry runs again. */
  async finish(req: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<void> {
    const idem = req.idempotency;
    if (idem === undefined) return;
    req.idempotency = undefined;
    if (reply.statusCode >= 500) {
      await this.repo.delete({ ownerId: idem.ownerId, idemKey: idem.key });
      return;
    }
    const body =
      typeof payload === 'string'
        ? payload
        : Buffer.isBuffer(payload)
          ? payload.toString('utf8')
          : '';
    const type = reply.getHeader('content-type');
    await this.repo.update(
      { ownerId: idem.ownerId, idemKey: idem.key },
      {
        state: 'DONE',
        responseStatus: reply.statusCode,
        responseBody: this.box.seal(body),
        responseType: typeof type === 'string' ? type : null,
      },
    );
  }
}
