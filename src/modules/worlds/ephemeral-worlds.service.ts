import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { randomInt } from 'node:crypto';
import { IsNull, Not } from 'typeorm';
import { Clock } from '../../common/clock/clock.js';
import { sha256Hex } from '../../common/crypto/tokens.js';
import type { WorldId } from '../../common/environment.js';
import { DomainError } from '../../common/errors/domain-error.js';
import { serviceUnavailable } from '../../common/errors/service-unavailable.js';
import type { Credential } from '../../common/http/request-context.js';
import { IdGenerator } from '../../common/ids/id-generator.js';
import { paginate, type Page } from '../../common/pagination/paginate.js';
import type { PageQueryDto } from '../../common/pagination/page-query.dto.js';
import { ConfigService } from '../../config/config.service.js';
import { ApiKeyRepository } from '../api-keys/api-key.repository.js';
import { newKeySecret } from '../api-keys/api-keys.service.js';
import { EngineRegistry } from '../trading/engine-registry.js';
import { WebhooksCore } from '../webhooks/webhooks.core.js';
import {
  DEFAULT_TTL_SECONDS,
  type CreateWorldDto,
  type CreatedWorldDto,
  type WorldDto,
} from './dto/world.dto.js';
import { PaperWorldRecords } from './paper-world-records.service.js';
import { WorldCatalog, type WorldRow } from './world-catalog.js';
import { WorldDatabases } from './world-databases.service.js';
import { isWorldIdShaped } from './world-files.js';
import { WorldStorage } from './world-storage.js';
import { WorldTemplate } from './world-template.service.js';
import { WorldWork } from './world-work.js';

/**
 * Cluster mode: how often the sweep looks for worlds whose create or delete a dead instance left
 * (their work lock released). Boot recovery runs only on the instance that takes the lease then.
 */
const ABANDONED_CHECK_MS = 30_000;
/** Fresh world ids to try when the id's work lock is held elsewhere (a 32-bit key collision). */
const CREATE_ATTEMPTS = 3;

/**
 * Ephemeral worlds (CONTRACT.md): create (a copy of the template, a key bound to the world),
 * list, get, delete and expire. A delete revokes the key first (its next request is 401
 * API_KEY_REVOKED, its sockets close), then stops the world's engine, closes and removes its
 * file. The registry row says CREATING or DELETING while a create or delete is under way, so a
 * boot after a crash finishes or removes a half world. Each create and delete runs under the
 * world's work (WorldWork): in cluster mode a lock a peer's recovery finds held while the
 * instance making or deleting the world lives, so only worlds a stop interrupted are removed.
 */
@Injectable()
export class EphemeralWorldsService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly log = new Logger('Worlds');
  private sweeper: NodeJS.Timeout | null = null;
  /** The clock's instant at which the last sweep found no world expired (see sweep). */
  private quietAt: string | null = null;
  /** Date.now() of the sweep's last look for abandoned worlds (cluster mode). */
  private abandonedAt = 0;

  constructor(
    private readonly catalog: WorldCatalog,
    private readonly databases: WorldDatabases,
    private readonly template: WorldTemplate,
    private readonly keys: ApiKeyRepository,
    private readonly engines: EngineRegistry,
    private readonly webhooks: WebhooksCore,
    private readonly config: ConfigService,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly records: PaperWorldRecords,
    private readonly storage: WorldStorage,
    private readonly work: WorldWork,
  ) {
    // Only a READY world is ever opened: a deleting one refuses new requests at once.
    databases.setOpenable((id) => catalog.one(id)?.status === 'READY');
  }

  async onApplicationBootstrap(): Promise<void> {
    // Cluster mode: one instance (the lease's holder) recovers and sweeps the worlds.
    await this.engines.once('ephemeral-worlds', () => this.recover());
    this.sweeper = setInterval(() => {
      this.engines
        .once('ephemeral-worlds', () => this.sweep())
        .catch((err: unknown) => this.log.error(`world sweep failed: ${String(err)}`));
    }, this.config.values.worldSweepMs);
    this.sweeper.unref();
  }

  onModuleDestroy(): void {
    if (this.sweeper !== null) clearInterval(this.sweeper);
  }

  /**
   * At boot, before any request: no half world survives a crash. A world left CREATING or
   * DELETING is removed (key revoked, file and records deleted, row gone), unless its create or
   * delete is under way on a live instance (cluster mode: its work lock is held; see
   * removeAbandoned). A READY world whose
   * file is missing or cut short is removed the same way, not recreated from the template: its
   * orders, positions and balances are gone, and an empty world under the same key would hide
   * that from the client, which gets 401 API_KEY_REVOKED and makes a new world instead. A world
   * file with no registry row (or a partial copy) is deleted, and an active world key whose world
   * has no row is revoked; such a world's records outside its file (export files) go with them.
   */
  private async recover(): Promise<void> {
    this.abandonedAt = Date.now();
    await this.removeAbandoned();
    for (const id of this.catalog.readyIds()) {
      if (this.storage.isWhole(id as WorldId)) continue;
      await this.work.exclusive(id, async () => {
        const row = this.catalog.one(id);
        if (row === undefined || !this.catalog.markDeleting(id)) return;
        this.log.warn(`removing the world ${id}: its database is missing or incomplete`);
        await this.remove(row);
      });
    }
    // Worlds with no row whose traces remain: their records outside the file go too.
    const rowless = new Set<WorldId>();
    for (const leftover of await this.storage.leftovers()) {
      const id = leftover.id;
      if (this.catalog.one(id) !== undefined && !leftover.partial) continue;
      this.log.warn(`deleting ${leftover.name}: no world of that id`);
      await this.storage.removeLeftover(leftover);
      if (this.catalog.one(id) === undefined) rowless.add(id);
    }
    const at = this.clock.nowDate().toISOString();
    for (const k of await this.keys.repo.findBy({ worldId: Not(IsNull()), revokedAt: IsNull() })) {
      if (this.catalog.one(k.worldId!) !== undefined) continue;
      this.log.warn(`revoking the key ${k.id} of the world ${k.worldId!}, which no longer exists`);
      await this.keys.updateWhere({ id: k.id, revokedAt: IsNull() }, { revokedAt: at }, [
        k.secretHash,
      ]);
      this.keys.announce('key.revoked', k.id);
      rowless.add(k.worldId! as WorldId);
    }
    for (const id of rowless) await this.records.clearWorld(id);
  }

  /**
   * Removes the worlds left CREATING or DELETING whose create or delete is under way nowhere: not
   * here, and (cluster mode) not on a live instance, which holds the world's work lock until it
   * is done. A world whose maker dies later has its lock released by PostgreSQL: the next
   * recovery or sweep removes it.
   */
  private async removeAbandoned(): Promise<void> {
    for (const found of this.catalog.unfinished()) {
      const ran = await this.work.exclusive(found.id, async () => {
        // Read again under the lock: its maker may have finished it meanwhile.
        const row = this.catalog.one(found.id);
        if (row === undefined || row.status === 'READY') return;
        this.log.warn(`finishing the ${row.status} world ${row.id} a stop interrupted`);
        await this.remove(row);
      });
      if (ran === null) {
        this.log.log(`the ${found.status} world ${found.id} is being finished by its instance`);
      }
    }
  }

  async create(c: Credential, body: CreateWorldDto): Promise<CreatedWorldDto> {
    // The world's work lock is taken before its row exists: no peer's recovery sees it unheld.
    for (let attempt = 0; attempt < CREATE_ATTEMPTS; attempt++) {
      const id = this.ids.next('wld') as WorldId;
      const made = await this.work.exclusive(id, () => this.make(id, c, body));
      if (made !== null) return made.value;
    }
    throw serviceUnavailable('No world could be created now: try again');
  }

  private async make(id: WorldId, c: Credential, body: CreateWorldDto): Promise<CreatedWorldDto> {
    const max = this.config.values.maxWorldsPerUser;
    const now = this.clock.now();
    const row: WorldRow = {
      id,
      user_id: c.userId,
      name: body.name ?? null,
      seed: body.seed ?? randomInt(0, 2_147_483_647),
      starting_balance_cents:
        body.starting_balance_cents ?? this.config.values.sandboxStartingBalanceCents,
      status: 'CREATING',
      key_id: null,
      clock_offset_ms: 0,
      expires_at: new Date(now + (body.ttl_seconds ?? DEFAULT_TTL_SECONDS) * 1000).toISOString(),
      created_at: new Date(now).toISOString(),
    };
    // Counted and inserted under the user's row lock: parallel creates at the cap, on any
    // instances sharing the database, cannot both pass.
    const live = this.catalog.insertWithinCap(row, max);
    if (live !== null) {
      throw new DomainError(
        'WORLD_LIMIT_REACHED',
        `At most ${max} live worlds per user: delete one you no longer use`,
        { limit: max, live },
      );
    }
    try {
      await this.template.createWorld(id);
      const secret = newKeySecret('test');
      const keyId = this.ids.next('key');
      await this.keys.insert(
        this.keys.repo.create({
          id: keyId,
          userId: c.userId,
          name: `world ${id}`,
          environment: 'test',
          prefix: secret.slice(0, 'svc_test_'.length + 4),
          secretHash: sha256Hex(secret),
          scopes: c.scopes.join(','),
          tier: c.tier,
          expiresAt: null,
          signingRequired: false,
          signingSecretEnc: null,
          createdAt: row.created_at,
          rotatedAt: null,
          lastUsedAt: null,
          revokedAt: null,
          worldId: id,
        }),
      );
      this.catalog.setStatus(id, 'READY', keyId);
      return { ...view({ ...row, status: 'READY', key_id: keyId }), key: secret };
    } catch (err) {
      await this.remove({ ...row, status: 'CREATING' });
      throw err;
    }
  }

  list(c: Credential, q: PageQueryDto): Page<WorldDto> {
    return paginate({
      list: 'worlds',
      keys: ['id'],
      query: q,
      fetch: (after, take) => this.catalog.page(c.userId, after?.[0] ?? '', take),
      keyOf: (r) => [r.id],
      map: view,
    });
  }

  get(c: Credential, id: string): WorldDto {
    return view(this.owned(c, id));
  }

  async delete(c: Credential, id: string): Promise<void> {
    const row = this.owned(c, id);
    // Not run (null) when another delete of it (an expiry, a peer's recovery) is under way.
    const done = await this.work.exclusive(row.id, async () => {
      if (!this.catalog.markDeleting(row.id)) return false;
      await this.remove(row);
      return true;
    });
    if (done?.value !== true) throw notFound(id);
  }

  /**
   * Expires due worlds and unloads idle ones (the sweeper's round; also called by tests). In
   * cluster mode it also removes, every ABANDONED_CHECK_MS (`abandonedNow`: this round), the
   * worlds a dead instance left CREATING or DELETING.
   */
  async sweep(abandonedNow = false): Promise<void> {
    const now = this.clock.nowDate().toISOString();
    // Nothing expired at this very instant last time, and nothing can have since: a world
    // expires at least MIN_TTL_SECONDS after it is made, so only a moved clock makes one due.
    // Each round asked again before: a blocking round trip on PostgreSQL while the clock stood.
    if (now !== this.quietAt) {
      const expired = this.catalog.expired(now);
      for (const id of expired) {
        await this.work.exclusive(id, async () => {
          const row = this.catalog.one(id);
          if (row === undefined || !this.catalog.markDeleting(id)) return;
          await this.remove(row);
        });
      }
      this.quietAt = expired.length === 0 ? now : null;
    }
    // Cluster mode: a create or delete whose instance died after this one booted is removed
    // here (its work lock released), not at the next boot; it counted against its user's cap.
    const due = abandonedNow || Date.now() - this.abandonedAt >= ABANDONED_CHECK_MS;
    if (this.work.locker !== null && due) {
      this.abandonedAt = Date.now();
      await this.removeAbandoned();
    }
    const idleMs = this.config.values.worldIdleUnloadSeconds * 1000;
    for (const id of this.databases.idleSince(Date.now() - idleMs)) this.databases.unload(id);
  }

  /**
   * Removes a world: key revoked (sockets closed), webhook endpoints disabled, engine stopped,
   * connection closed, its records outside its file deleted (notifications, export files),
   * file removed, row deleted, in that order, each step safe to repeat.
   */
  private async remove(row: WorldRow): Promise<void> {
    this.catalog.setStatus(row.id, 'DELETING');
    const at = this.clock.nowDate().toISOString();
    const keys = await this.keys.repo.findBy({ worldId: row.id, revokedAt: IsNull() });
    for (const k of keys) {
      await this.keys.updateWhere({ id: k.id, revokedAt: IsNull() }, { revokedAt: at }, [
        k.secretHash,
      ]);
      this.keys.announce('key.revoked', k.id);
    }
    if (this.webhooks.repo.disableWorld(row.id, at) > 0) this.webhooks.changed(null);
    this.databases.unload(row.id);
    await this.records.clearWorld(row.id);
    await this.storage.remove(row.id);
    this.catalog.remove(row.id);
  }

  private owned(c: Credential, id: string): WorldRow {
    const row = isWorldIdShaped(id) ? this.catalog.ofUser(c.userId, id) : undefined;
    if (row === undefined || row.status !== 'READY') throw notFound(id);
    return row;
  }

  /** Whether a world is loaded in memory now (tests, bench). */
  isLoaded(id: WorldId): boolean {
    return this.engines.isWorldLoaded(id);
  }
}

function notFound(id: string): DomainError {
  return new DomainError('NOT_FOUND', `No world ${id.slice(0, 60)}`, { world_id: id });
}

function view(r: WorldRow): WorldDto {
  return {
    id: r.id,
    name: r.name,
    seed: r.seed,
    starting_balance_cents: r.starting_balance_cents,
    status: r.status,
    key_id: r.key_id ?? '',
    expires_at: r.expires_at,
    created_at: r.created_at,
  };
}
