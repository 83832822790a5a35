import { ConfigService } from '../config/config.service.js';
import { createHash } from 'node:crypto';
import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { Clock } from '../common/clock/clock.js';
import { hashPassword } from '../common/crypto/password.js';
import { IdGenerator } from '../common/ids/id-generator.js';
import { MarketEntity, type MarketCategory } from '../modules/markets/entities/market.entity.js';
import { UserEntity } from '../modules/users/entities/user.entity.js';
import { UsersService } from '../modules/users/users.service.js';
import { ENGINE_DB, PLATFORM_DB } from './databases.js';
import { readSeed } from './seed-files.js';
import { isCryptoSymbol } from '../modules/crypto/crypto-symbols.js';
import { parseUsd } from '../modules/crypto/usd.js';
import { seedSportsEvents, type SportsSeedFile } from '../modules/sports/sports-seed.js';

interface MarketSeed {
  slug: string;
  title: string;
  description: string;
  category: MarketCategory;
  close_time: string;
  reference_price: number;
  /** Crypto markets that resolve by themselves: the index symbol and the strike ("150000.00"). */
  index?: string;
  strike?: string;
}

interface AccountSeed {
  email: string;
  email_verified: boolean;
  roles: string[];
  rfq_responder_approved: boolean;
}

/** Market ids derive from the slug, so both engines and every restart agree on them. */
export function marketIdForSlug(slug: string): string {
  return `mkt_${createHash('sha256').update(slug).digest('hex').slice(0, 20)}`;
}

/**
 * Loads seeds/ on start. Idempotent: rows that exist (by slug or email) are left alone. The demo
 * accounts are not loaded with APP_ENV=production.
 */
@Injectable()
export class SeedService implements OnModuleInit {
  private readonly log = new Logger('Seed');

  constructor(
    @InjectDataSource(PLATFORM_DB) private readonly platform: DataSource,
    @InjectDataSource(ENGINE_DB.live) private readonly live: DataSource,
    @InjectDataSource(ENGINE_DB.test) private readonly paper: DataSource,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly config: ConfigService,
    private readonly users: UsersService,
  ) {}

  /** Runs at module init, so the engines (restored at bootstrap) see the seeded markets. */
  async onModuleInit(): Promise<void> {
    const markets = readSeed<MarketSeed[]>('markets.json');
    const added = [
      await this.seedMarkets(this.live, markets),
      await this.seedMarkets(this.paper, markets),
    ];
    // After the markets: events link some of them. Each world gets its own copy of the events.
    const sports = readSeed<SportsSeedFile>('sports.json').events;
    const now = this.clock.now();
    const events = [
      await this.live.transaction((tx) => seedSportsEvents(tx, sports, now, marketIdForSlug)),
      await this.paper.transaction((tx) => seedSportsEvents(tx, sports, now, marketIdForSlug)),
    ];
    // The demo accounts' password is public (README, seeds/): never on production, where
    // ADMIN_EMAILS names the admins instead.
    const users =
      this.config.values.appEnv === 'production'
        ? 0
        : await this.seedAccounts(readSeed('accounts.json'));
    if (added[0] + added[1] + events[0] + events[1] + users > 0) {
      this.log.log(
        `seeded ${added[0]} live markets, ${added[1]} paper markets, ${events[0]} live and ${events[1]} paper sports events, ${users} accounts`,
      );
    }
  }

  /** The instant seeds made now are stamped with (what they depend on besides the seed files). */
  seedInstant(): number {
    return this.clock.now();
  }

  /**
   * Seeds an engine database the way the paper one is (markets, then sports events): the
   * ephemeral worlds' template.
   */
  async seedEngine(ds: DataSource): Promise<void> {
    await this.seedMarkets(ds, readSeed<MarketSeed[]>('markets.json'));
    const sports = readSeed<SportsSeedFile>('sports.json').events;
    const now = this.clock.now();
    await ds.transaction((tx) => seedSportsEvents(tx, sports, now, marketIdForSlug));
  }

  private async seedMarkets(ds: DataSource, seeds: MarketSeed[]): Promise<number> {
    const now = this.clock.nowDate().toISOString();
    return ds.transaction(async (tx) => {
      const repo = tx.getRepository(MarketEntity);
      const existing = new Set((await repo.find({ select: { slug: true } })).map((m) => m.slug));
      const rows = seeds
        .filter((s) => !existing.has(s.slug))
        .map((s) =>
          repo.create({
            id: marketIdForSlug(s.slug),
            slug: s.slug,
            title: s.title,
            description: s.description,
            category: s.category,
            status: 'OPEN',
            outcome: null,
            // One spelling (YYYY-MM-DDTHH:mm:ss.sssZ): the markets list sorts and pages on it.
            closeTime: canonicalTime(s.close_time, s.slug),
            referencePrice: s.reference_price,
            ...indexOf(s),
            lastPrice: null,
            volume: 0,
            createdAt: now,
            updatedAt: now,
          }),
        );
      if (rows.length > 0) await repo.insert(rows);
      // A database seeded before markets had an index gets the seeded index and strike once.
      for (const s of seeds) {
        if (s.index === undefined || !existing.has(s.slug)) continue;
        await repo
          .createQueryBuilder()
          .update()
          .set(indexOf(s))
          .where('slug = :slug AND index_symbol IS NULL', { slug: s.slug })
          .execute();
      }
      return rows.length;
    });
  }

  private async seedAccounts(seed: { password: string; accounts: AccountSeed[] }): Promise<number> {
    const repo = this.platform.getRepository(UserEntity);
    let added = 0;
    for (const a of seed.accounts) {
      if (await repo.existsBy({ email: a.email })) continue;
      await repo.insert({
        id: this.ids.next('usr'),
        username: await this.users.freeUsername(),
        email: a.email,
        passwordHash: await hashPassword(seed.password, this.config.values.passwordScryptCost),
        emailVerified: a.email_verified,
        roles: a.roles.join(','),
        rfqResponderApproved: a.rfq_responder_approved,
        createdAt: this.clock.nowDate().toISOString(),
      });
      added++;
    }
    return added;
  }
}

/** A seed market's index and strike in cents (both null when it names none); a bad one stops the start. */
function indexOf(s: MarketSeed): { indexSymbol: string | null; strikeCents: number | null } {
  if (s.index === undefined && s.strike === undefined)
    return { indexSymbol: null, strikeCents: null };
  const strike = s.strike === undefined ? null : parseUsd(s.strike);
  if (
    s.index === undefined ||
    !isCryptoSymbol(s.index) ||
    strike === null ||
    s.category !== 'CRYPTO'
  ) {
    throw new Error(
      `seed market ${s.slug}: a CRYPTO market needs a known index and a strike "123.45"`,
    );
  }
  return { indexSymbol: s.index, strikeCents: strike };
}

/** An ISO time in toISOString's spelling; a seed with anything else stops the start. */
function canonicalTime(value: string, slug: string): string {
  const t = Date.parse(value);
  if (Number.isNaN(t)) throw new Error(`seed market ${slug}: close_time is not a time: ${value}`);
  return new Date(t).toISOString();
}
