import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { IsNull, type DataSource } from 'typeorm';
import {
  ADMIN_SCOPES,
  DEFAULT_KEY_SCOPES,
  isWriteScope,
  type Scope,
} from '../../common/api/scopes.js';
import { Clock } from '../../common/clock/clock.js';
import { randomBase62, sha256Hex } from '../../common/crypto/tokens.js';
import { DomainError } from '../../common/errors/domain-error.js';
import type { Credential } from '../../common/http/request-context.js';
import { IdGenerator } from '../../common/ids/id-generator.js';
import { paginateAsync, type Page } from '../../common/pagination/paginate.js';
import type { PageQueryDto } from '../../common/pagination/page-query.dto.js';
import { ConfigService } from '../../config/config.service.js';
import { connectionOf, isUniqueViolation, PLATFORM_DB } from '../../database/databases.js';
import { TermsService } from '../auth/terms.service.js';
import { MailService } from '../mail/mail.service.js';
import { NotificationsService } from '../notifications/notifications.service.js';
import { UsersService } from '../users/users.service.js';
import { ApiKeyRepository } from './api-key.repository.js';
import type {
  ApiKeyDto,
  CreateApiKeyDto,
  CreatedApiKeyDto,
  TierRequestDto,
} from './dto/api-key.dto.js';
import { ApiKeyEntity, type Tier } from './entities/api-key.entity.js';
import { TierRequestEntity } from './entities/tier-request.entity.js';
import { isPaperOnlyKey, worldOfKey } from '../worlds/key-world.js';
import { commitTierDecision } from './tier-decision.js';
import { insertKeyWithinCap } from './api-key-insert.js';

const DAY_MS = 86_400_000;

/** Test keys are paper-only by construction: they carry env:paper implicitly. */
function scopesFor(dto: CreateApiKeyDto, requested: Scope[]): Scope[] {
  return dto.environment === 'test' && !requested.includes('env:paper')
    ? [...requested, 'env:paper' as const]
    : requested;
}
const PREFIX_VISIBLE = 4;

@Injectable()
export class ApiKeysService {
  private readonly log = new Logger('ApiKeys');
  constructor(
    private readonly keys: ApiKeyRepository,
    @InjectDataSource(PLATFORM_DB) private readonly db: DataSource,
    private readonly users: UsersService,
    private readonly terms: TermsService,
    private readonly mail: MailService,
    private readonly config: ConfigService,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly notifications: NotificationsService,
  ) {}

  /** Creates a key, enforcing every rule of SPEC.md (Scope rules, Key classes, Developer terms). */
  async create(userId: string, dto: CreateApiKeyDto): Promise<CreatedApiKeyDto> {
    const user = await this.users.byId(userId);
    if (user === null) throw new DomainError('UNAUTHENTICATED', 'The account no longer exists');
    const requested: Scope[] = dto.scopes ?? [...DEFAULT_KEY_SCOPES];
    // env:paper makes any key paper-only (CONTRACT.md), so it is a test key for this rule.
    const paperOnly = isPaperOnlyKey({ environment: dto.environment, scopes: requested });
    if (paperOnly && !this.config.values.sandboxEnabled) {
      throw new DomainError(
        'SANDBOX_DISABLED',
        'The developer sandbox is disabled: test keys (and env:paper keys) cannot be minted',
      );
    }
    const admin = requested.filter((s) => (ADMIN_SCOPES as readonly string[]).includes(s));
    if (admin.length > 0) {
      throw new DomainError(
        'ADMIN_SCOPE_FORBIDDEN',
        'Admin scopes can never be granted to a user-created key',
        {
          forbidden_scopes: admin,
        },
      );
    }
    const write = requested.filter(isWriteScope);
    if (write.length > 0 && dto.acknowledge_write_scopes !== true) {
      throw new DomainError(
        'WRITE_SCOPES_NOT_ACKNOWLEDGED',
        'Write scopes were requested: send acknowledge_write_scopes: true to confirm',
        { write_scopes: write },
      );
    }
    if (write.length > 0 && !user.emailVerified) {
      throw new DomainError(
        'EMAIL_NOT_VERIFIED',
        'Write scopes need a verified email; verify it first',
        {
          write_scopes: write,
        },
      );
    }
    await this.terms.assertAccepted(userId);
    const { entity, secret, signingSecret } = this.insertWithinCap(
      userId,
      dto,
      scopesFor(dto, requested),
    );
    await this.securityMail(user.email, 'API_KEY_CREATED', 'created', entity);
    return {
      ...toKeyDto(entity),
      key: secret,
      ...(signingSecret !== null ? { signing_secret: signingSecret } : {}),
    };
  }

  /** A new key, inserted only while the user holds fewer than MAX_API_KEYS_PER_USER active keys. */
  private insertWithinCap(
    userId: string,
    dto: CreateApiKeyDto,
    scopes: Scope[],
  ): { entity: ApiKeyEntity; secret: string; signingSecret: string | null } {
    // A bounded number of active keys: every session request reads them (its tier).
    const cap = this.config.values.maxApiKeysPerUser;
    const secret = newKeySecret(dto.environment);
    const signingSecret = dto.signing_required === true ? newSigningSecret() : null;
    const now = this.clock.now();
    const entity: ApiKeyEntity = this.keys.repo.create({
      id: this.ids.next('key'),
      userId,
      name: dto.name,
      environment: dto.environment,
      prefix: secret.slice(0, `svc_${dto.environment}_`.length + PREFIX_VISIBLE),
      secretHash: sha256Hex(secret),
      scopes: scopes.join(','),
      tier: 'FREE',
      expiresAt:
        dto.expires_in_days === undefined
          ? null
          : new Date(now + dto.expires_in_days * DAY_MS).toISOString(),
      signingRequired: signingSecret !== null,
      signingSecretEnc: signingSecret === null ? null : this.keys.box.seal(signingSecret),
      createdAt: new Date(now).toISOString(),
      rotatedAt: null,
      lastUsedAt: null,
      revokedAt: null,
      worldId: null,
    });
    insertKeyWithinCap(connectionOf(this.db), entity, cap);
    return { entity, secret, signingSecret };
  }

  async list(userId: string, q: PageQueryDto): Promise<Page<ApiKeyDto>> {
    return paginateAsync({
      list: 'api-keys',
      keys: ['id'],
      query: q,
      fetch: (after, take) => {
        const qb = this.keys.repo.createQueryBuilder('k').where('k.user_id = :userId', { userId });
        if (after !== undefined) qb.andWhere('k.id > :after', { after: after[0] });
        return qb.orderBy('k.id', 'ASC').take(take).getMany();
      },
      keyOf: (k) => [k.id],
      map: toKeyDto,
    });
  }

  /**
   * New secret, same id and settings; the old secret is refused from the next request on. With
   * `signing`, a signing-required key also gets a new signing secret and the old one stops
   * signing at once (a rotation after a leak); by default the signing secret stays, so a client
   * that rotates its key on a schedule keeps signing as before.
   */
  async rotate(userId: string, id: string, signing = false): Promise<CreatedApiKeyDto> {
    const entity = await this.owned(userId, id);
    // The body is well formed either way: whether there is a signing secret to replace is the
    // key's state, which a request schema cannot see, so a conflict (409) and not a 400.
    if (signing && !entity.signingRequired) {
      throw new DomainError(
        'API_KEY_HAS_NO_SIGNING_SECRET',
        'This key has no signing secret to replace (signing_required is false): rotate without rotate_signing_secret, or create a signing-required key',
        { key_id: entity.id },
      );
    }
    const inactive = this.inactive(entity);
    if (inactive !== null) {
      throw new DomainError('API_KEY_NOT_ACTIVE', `${article(inactive)} key cannot be rotated`);
    }
    // A rotation mints a new secret: while the sandbox is off no test (or env:paper) secret is.
    const paperOnly = isPaperOnlyKey(entity);
    if (paperOnly && !this.config.values.sandboxEnabled) {
      throw new DomainError(
        'SANDBOX_DISABLED',
        'The developer sandbox is disabled: a test key (or env:paper key) cannot be rotated',
      );
    }
    const previousHash = entity.secretHash;
    const secret = newKeySecret(entity.environment);
    const signingSecret = signing ? newSigningSecret() : null;
    const changes = {
      secretHash: sha256Hex(secret),
      prefix: secret.slice(0, `svc_${entity.environment}_`.length + PREFIX_VISIBLE),
      rotatedAt: this.clock.nowDate().toISOString(),
      ...(signingSecret !== null ? { signingSecretEnc: this.keys.box.seal(signingSecret) } : {}),
    };
    // Only from the secret read above, and only while not revoked: a concurrent revoke or
    // rotation wins, and this one changes nothing.
    const rotated = await this.keys.updateWhere(
      { id: entity.id, secretHash: previousHash, revokedAt: IsNull() },
      changes,
      [previousHash],
    );
    if (!rotated) {
      throw new DomainError(
        'API_KEY_NOT_ACTIVE',
        'The key was revoked or rotated by another request meanwhile; read it again',
        { key_id: entity.id },
      );
    }
    Object.assign(entity, changes);
    this.keys.announce('key.rotated', entity.id);
    const user = await this.users.byId(userId);
    await this.securityMail(user!.email, 'API_KEY_ROTATED', 'rotated', entity);
    return {
      ...toKeyDto(entity),
      key: secret,
      ...(signingSecret !== null ? { signing_secret: signingSecret } : {}),
    };
  }

  async revoke(userId: string, id: string): Promise<ApiKeyDto> {
    const entity = await this.owned(userId, id);
    if (entity.revokedAt === null) {
      const revokedAt = this.clock.nowDate().toISOString();
      const revoked = await this.keys.updateWhere(
        { id: entity.id, revokedAt: IsNull() },
        { revokedAt },
        [entity.secretHash],
      );
      // Revoked by a concurrent request: that one told the owner.
      if (!revoked) return toKeyDto(await this.owned(userId, id));
      entity.revokedAt = revokedAt;
      this.keys.announce('key.revoked', entity.id);
      const user = await this.users.byId(userId);
      await this.securityMail(user!.email, 'API_KEY_REVOKED', 'revoked', entity);
    }
    return toKeyDto(entity);
  }

  async requestTier(
    userId: string,
    id: string,
    tier: Tier,
    reason: string,
  ): Promise<TierRequestDto> {
    const key = await this.owned(userId, id);
    const inactive = this.inactive(key);
    if (inactive !== null) {
      throw new DomainError('API_KEY_NOT_ACTIVE', `${article(inactive)} key cannot change tier`);
    }
    if (tier === key.tier) {
      throw new DomainError('TIER_UNCHANGED', `The key is already on tier ${tier}`, {
        key_id: key.id,
        tier,
      });
    }
    const repo = this.db.getRepository(TierRequestEntity);
    const row: TierRequestEntity = {
      id: this.ids.next('tier'),
      keyId: key.id,
      userId,
      tier,
      reason,
      status: 'PENDING',
      createdAt: this.clock.nowDate().toISOString(),
      decidedAt: null,
      decidedBy: null,
    };
    // The check, then the insert; a request racing this one may pass the check too, and the
    // unique index lets one through: the loser names the winner, or, if an admin decided it in
    // between, tries once more.
    for (let attempt = 0; ; attempt++) {
      const waiting = await repo.findOneBy({ keyId: key.id, status: 'PENDING' });
      if (waiting !== null) throw tierRequestPending(waiting);
      try {
        await repo.insert(row);
        break;
      } catch (err) {
        if (!isUniqueViolation(err) || attempt > 0) throw err;
      }
    }
    return toTierDto(row);
  }

  async listTierRequests(
    c: Credential,
    status: string | undefined,
    q: PageQueryDto,
  ): Promise<Page<TierRequestDto>> {
    await this.assertAdmin(c);
    return paginateAsync({
      list: 'tier-requests',
      keys: ['id'],
      query: q,
      fetch: (after, take) => {
        const qb = this.db.getRepository(TierRequestEntity).createQueryBuilder('t');
        if (status !== undefined) qb.where('t.status = :status', { status });
        if (after !== undefined) qb.andWhere('t.id > :after', { after: after[0] });
        return qb.orderBy('t.id', 'ASC').take(take).getMany();
      },
      keyOf: (t) => [t.id],
      map: toTierDto,
    });
  }

  /** Admin review: approval changes the key's tier. */
  async decideTier(c: Credential, requestId: string, approve: boolean): Promise<TierRequestDto> {
    await this.assertAdmin(c);
    const repo = this.db.getRepository(TierRequestEntity);
    const req = await repo.findOneBy({ id: requestId });
    if (req === null) {
      throw new DomainError('NOT_FOUND', `No tier request ${requestId}`, {
        tier_request_id: requestId,
      });
    }
    if (req.status !== 'PENDING') {
      throw new DomainError(
        'TIER_REQUEST_NOT_PENDING',
        `Tier request ${requestId} is already ${req.status}`,
      );
    }
    const key = await this.keys.repo.findOneBy({ id: req.keyId });
    const inactive = key === null ? 'revoked' : this.inactive(key);
    if (approve && inactive !== null) {
      throw new DomainError(
        'API_KEY_NOT_ACTIVE',
        `The key was ${inactive} since the request; deny it instead`,
        {
          key_id: req.keyId,
        },
      );
    }
    const decision = {
      status: approve ? ('APPROVED' as const) : ('DENIED' as const),
      decidedAt: this.clock.nowDate().toISOString(),
      decidedBy: c.userId,
    };
    // Decided once, with the key's tier and the requester's notification (in the key's world; an
    // email follows) in one synchronous transaction, announced after the commit.
    const name = keyLabel(key, req.keyId);
    const notice = commitTierDecision(
      connectionOf(this.db),
      requestId,
      decision,
      approve && key !== null ? { keyId: key.id, tier: req.tier } : null,
      () =>
        this.notifications.store({
          userId: req.userId,
          environment: key === null ? 'live' : worldOfKey(key),
          type: approve ? 'TIER_REQUEST_APPROVED' : 'TIER_REQUEST_DENIED',
          title: approve ? 'Tier request approved' : 'Tier request denied',
          body: approve
            ? `API key ${name} is now on tier ${req.tier}.`
            : `Your request to move API key ${name} to tier ${req.tier} was denied.`,
          data: { request_id: req.id, key_id: req.keyId, tier: req.tier },
        }),
    );
    this.notifications.announce(notice);
    if (approve && key !== null) {
      await this.keys.forget(key.id, [key.secretHash]);
      this.keys.announce('key.changed', key.id);
    }
    Object.assign(req, decision);
    this.tierMail(req, key, approve).catch((err: unknown) =>
      this.log.error(`tier decision email for ${req.id} failed: ${String(err)}`),
    );
    return toTierDto(req);
  }

  /** Why a key can no longer be used (revoked, or past its expiry on the service clock), or null. */
  private inactive(key: ApiKeyEntity): 'revoked' | 'expired' | null {
    if (key.revokedAt !== null) return 'revoked';
    if (key.expiresAt !== null && Date.parse(key.expiresAt) <= this.clock.now()) return 'expired';
    return null;
  }

  private async assertAdmin(c: Credential): Promise<void> {
    const user = await this.users.byId(c.userId);
    if (c.type !== 'SESSION' || user === null || !this.users.isAdmin(user)) {
      throw new DomainError('ADMIN_REQUIRED', 'This operation needs an admin session');
    }
  }

  private async owned(userId: string, id: string): Promise<ApiKeyEntity> {
    const entity = /^key_[a-z0-9]{1,40}$/.test(id)
      ? await this.keys.repo.findOneBy({ id, userId })
      : null;
    if (entity === null) throw new DomainError('NOT_FOUND', `No API key ${id}`, { key_id: id });
    return entity;
  }

  /** Security emails show the key prefix only, never the secret. */
  /** The decision on a tier request, to its requester (the key prefix only, as ever). */
  private async tierMail(
    req: TierRequestEntity,
    key: ApiKeyEntity | null,
    approve: boolean,
  ): Promise<void> {
    const user = await this.users.byId(req.userId);
    if (user === null) return;
    const name = keyLabel(key, req.keyId);
    await this.mail.send({
      to: user.email,
      kind: approve ? 'TIER_REQUEST_APPROVED' : 'TIER_REQUEST_DENIED',
      subject: approve ? `Tier request approved: ${req.tier}` : `Tier request denied: ${req.tier}`,
      body: approve
        ? `Your API key ${name} is now on tier ${req.tier}; its limits changed at once.`
        : `Your request to move API key ${name} to tier ${req.tier} was denied. You may ask again.`,
    });
  }

  private async securityMail(
    to: string,
    kind: string,
    verb: string,
    k: ApiKeyEntity,
  ): Promise<void> {
    await this.mail.send({
      to,
      kind,
      subject: `Security notice: API key ${k.prefix}... ${verb}`,
      body: [
        `Your ${k.environment} API key "${k.name}" (${k.prefix}...) was ${verb} at ${this.clock.nowDate().toISOString()}.`,
        'If this was not you, revoke the key and rotate your password.',
      ].join('\n'),
    });
  }
}

/** How a key is named to its owner: its name and prefix, never the secret. */
function keyLabel(key: ApiKeyEntity | null, keyId: string): string {
  return key === null ? keyId : `"${key.name}" (${key.prefix}...)`;
}

export function newKeySecret(env: 'live' | 'test'): string {
  return `svc_${env}_${randomBase62(32)}`;
}

export function toKeyDto(k: ApiKeyEntity): ApiKeyDto {
  return {
    id: k.id,
    name: k.name,
    environment: k.environment,
    prefix: k.prefix,
    scopes: k.scopes === '' ? [] : k.scopes.split(','),
    tier: k.tier,
    expires_at: k.expiresAt,
    signing_required: k.signingRequired,
    created_at: k.createdAt,
    last_used_at: k.lastUsedAt,
    revoked_at: k.revokedAt,
  };
}

function toTierDto(t: TierRequestEntity): TierRequestDto {
  return {
    id: t.id,
    key_id: t.keyId,
    tier: t.tier,
    reason: t.reason,
    status: t.status,
    created_at: t.createdAt,
    decided_at: t.decidedAt,
  };
}

/** One request per key waits for review at a time: the caller is told which one. */
function tierRequestPending(waiting: TierRequestEntity): DomainError {
  return new DomainError(
    'TIER_REQUEST_PENDING',
    `Tier request ${waiting.id} for this key (tier ${waiting.tier}) is still waiting for review`,
    { request_id: waiting.id, tier: waiting.tier },
  );
}

/** "A revoked", "An expired". */
function article(state: 'revoked' | 'expired'): string {
  return `${state === 'expired' ? 'An' : 'A'} ${state}`;
}

/** A request-signing secret (svc_sign_ + 40 base62 characters). */
function newSigningSecret(): string {
  return `svc_sign_${randomBase62(40)}`;
}
