import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** An event of seeds/sports.json, with the ids the seeder derives from its slugs. */
export interface SeedEvent {
  id: string;
  slug: string;
  sport: string;
  league: string;
  home: string;
  away: string;
  start_offset_hours?: number;
  start_time?: string;
  reference_price: number;
  final?: { home: number; away: number };
  links?: { slug: string; rule: string }[];
  /** The event's own "Will <home> beat <away>?" market. */
  marketId: string;
}

const hashId = (prefix: string, slug: string) =>
  `${prefix}_${createHash('sha256').update(slug).digest('hex').slice(0, 20)}`;

export const marketIdOf = (slug: string) => hashId('mkt', slug);

export const SEED_EVENTS: SeedEvent[] = (
  JSON.parse(readFileSync(new URL('../../seeds/sports.json', import.meta.url), 'utf8')) as {
    events: Omit<SeedEvent, 'id' | 'marketId'>[];
  }
).events.map((e) => ({
  ...e,
  id: hashId('spe', e.slug),
  marketId: marketIdOf(`${e.slug}-home-wins`),
}));

export function seedEvent(slug: string): SeedEvent {
  const e = SEED_EVENTS.find((x) => x.slug === slug);
  if (e === undefined) throw new Error(`no seeded event ${slug}`);
  return e;
}

/** Markets the sports seed adds (one per event) beyond seeds/markets.json. */
export const SPORTS_SEED_MARKETS = SEED_EVENTS.length;
