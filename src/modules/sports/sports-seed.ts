import { sqlFor } from '../../common/sql/typeorm-sql.js';
import { createHash } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { MarketEntity } from '../markets/entities/market.entity.js';
import { outcomeOf, parseRule, type EventRule } from './event-rule.js';

/** One event of seeds/sports.json. */
export interface SportsEventSeed {
  slug: string;
  sport: string;
  league: string;
  home: string;
  away: string;
  /** Absolute start; or else start_offset_hours from the moment the event is first seeded. */
  start_time?: string;
  start_offset_hours?: number;
  /** Hours after the start at which the event's own market closes. */
  market_close_hours: number;
  reference_price: number;
  final?: { home: number; away: number };
  links?: { slug: string; rule: string }[];
}

export interface SportsSeedFile {
  events: SportsEventSeed[];
}

const HOUR = 3_600_000;

/** Event ids derive from the slug, so both worlds and every restart agree on them. */
export function eventIdForSlug(slug: string): string {
  return `spe_${createHash('sha256').update(slug).digest('hex').slice(0, 20)}`;
}

/** The slug of an event's own "Will <home> beat <away>?" market. */
export function eventMarketSlug(eventSlug: string): string {
  return `${eventSlug}-home-wins`;
}

/**
 * Inserts the events, their own markets and their links that one world's database lacks (an
 * existing database gains new seeds; nothing present is changed, so a seeded event the sandbox
 * ended stays ended). Runs inside the seeder's transaction. Returns the events added.
 */
export async function seedSportsEvents(
  tx: EntityManager,
  seeds: SportsEventSeed[],
  now: number,
  marketIdForSlug: (slug: string) => string,
): Promise<number> {
  const iso = new Date(now).toISOString();
  const stored = new Map(
    ((await tx.query('SELECT id, slug, start_time FROM sports_events')) as StoredEvent[]).map(
      (e) => [e.slug, e],
    ),
  );
  const slugs = new Set(
    (await tx.getRepository(MarketEntity).find({ select: { slug: true } })).map((m) => m.slug),
  );
  let added = 0;
  for (const s of seeds) {
    let event = stored.get(s.slug);
    if (event === undefined) {
      event = { id: eventIdForSlug(s.slug), slug: s.slug, start_time: startOf(s, now) };
      await tx.query(
        sqlFor(
          tx.connection,
          `INSERT INTO sports_events (id, slug, sport, league, title, home, away, start_time,
           home_score, away_score, final_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ),
        [
          event.id,
          s.slug,
          s.sport,
          s.league,
          `${s.home} vs ${s.away}`,
          s.home,
          s.away,
          event.start_time,
          s.final?.home ?? null,
          s.final?.away ?? null,
          s.final === undefined ? null : iso,
          iso,
        ],
      );
      added++;
    }
    const own = eventMarketSlug(s.slug);
    if (!slugs.has(own)) await insertOwnMarket(tx, s, event, iso, marketIdForSlug(own));
    for (const link of s.links ?? []) {
      // Only a market not yet linked: a link made by an operator (or another seed) stands.
      await tx.query(
        sqlFor(
          tx.connection,
          'UPDATE markets SET event_id = ?, event_rule = ? WHERE slug = ? AND event_id IS NULL',
        ),
        [event.id, ruleOf(link.rule, s.slug), link.slug],
      );
    }
  }
  return added;
}

interface StoredEvent {
  id: string;
  slug: string;
  start_time: string;
}

async function insertOwnMarket(
  tx: EntityManager,
  s: SportsEventSeed,
  event: StoredEvent,
  now: string,
  id: string,
): Promise<void> {
  const rule: EventRule = 'HOME_WINS';
  // A seeded final comes with its market resolved by the same rule the sandbox final applies.
  const outcome = s.final === undefined ? null : outcomeOf(rule, s.final.home, s.final.away);
  const close = new Date(Date.parse(event.start_time) + s.market_close_hours * HOUR);
  await tx.getRepository(MarketEntity).insert({
    id,
    slug: eventMarketSlug(s.slug),
    title: `Will ${s.home} beat ${s.away}?`,
    description: `Resolves YES if: ${s.home} beat ${s.away} (${s.league}, ${s.sport.replace('_', ' ')}). Resolves NO on a loss or a draw. Demo market of the sandbox, resolved by the event's final score.`,
    category: 'SPORTS',
    status: outcome === null ? 'OPEN' : 'RESOLVED',
    outcome,
    closeTime: close.toISOString(),
    referencePrice: s.reference_price,
    lastPrice: null,
    volume: 0,
    eventId: event.id,
    eventRule: rule,
    createdAt: now,
    updatedAt: now,
  });
}

function startOf(s: SportsEventSeed, now: number): string {
  if (s.start_time !== undefined) {
    const t = Date.parse(s.start_time);
    if (Number.isNaN(t)) throw new Error(`seed event ${s.slug}: start_time is not a time`);
    return new Date(t).toISOString();
  }
  if (s.start_offset_hours === undefined) throw new Error(`seed event ${s.slug}: no start`);
  // Whole seconds: the seeded times read as the times of a schedule, not of a boot.
  return new Date(Math.floor((now + s.start_offset_hours * HOUR) / 1000) * 1000).toISOString();
}

function ruleOf(value: string, slug: string): EventRule {
  const rule = parseRule(value);
  if (rule === null) throw new Error(`seed event ${slug}: unknown rule ${value}`);
  return rule;
}
