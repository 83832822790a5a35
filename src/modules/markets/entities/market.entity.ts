import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

export type MarketStatus = 'OPEN' | 'HALTED' | 'CLOSED' | 'RESOLVED';
export type MarketCategory = 'SPORTS' | 'CRYPTO' | 'POLITICS' | 'ECONOMICS' | 'CULTURE';
export type Outcome = 'YES' | 'NO';

/** A binary market as one engine (live or paper) sees it; each engine database has its own rows. */
@Entity('markets')
@Index('idx_markets_close_id', ['closeTime', 'id'])
export class MarketEntity {
  @PrimaryColumn({ type: 'varchar', length: 40 })
  id: string;

  @Column({ type: 'varchar', length: 120, unique: true })
  slug: string;

  @Column({ type: 'varchar', length: 300 })
  title: string;

  @Column({ type: 'text', default: '' })
  description: string;

  @Column({ type: 'varchar', length: 20 })
  category: MarketCategory;

  @Column({ type: 'varchar', length: 20 })
  status: MarketStatus;

  @Column({ type: 'varchar', length: 3, nullable: true })
  outcome: Outcome | null;

  @Column({ name: 'close_time', type: 'varchar', length: 30 })
  closeTime: string;

  /** Starting reference probability in YES cents (1..99) for the paper price feed. */
  @Column({ name: 'reference_price', type: 'integer' })
  referencePrice: number;

  /** The crypto index (BTC-USD, ...) a self-resolving market settles on; null for other markets. */
  @Column({ name: 'index_symbol', type: 'varchar', length: 16, nullable: true })
  indexSymbol: string | null;

  /** The strike in USD cents: YES when the index is strictly above it at close_time. */
  @Column({ name: 'strike_cents', type: 'integer', nullable: true })
  strikeCents: number | null;

  @Column({ name: 'last_price', type: 'integer', nullable: true })
  lastPrice: number | null;

  @Column({ type: 'integer', default: 0 })
  volume: number;

  /** The sports event this market is about (CONTRACT.md "Sports and crypto"); null for others. */
  @Column({ name: 'event_id', type: 'varchar', length: 40, nullable: true })
  eventId: string | null;

  /** How the event's final score resolves this market (see sports/event-rule.ts). */
  @Column({ name: 'event_rule', type: 'varchar', length: 20, nullable: true })
  eventRule: string | null;

  /** The user who created it through POST /markets; null for seeded markets (nobody's). */
  @Column({ name: 'creator_id', type: 'varchar', length: 40, nullable: true })
  creatorId: string | null;

  @Column({ name: 'created_at', type: 'varchar', length: 30 })
  createdAt: string;

  @Column({ name: 'updated_at', type: 'varchar', length: 30 })
  updatedAt: string;
}
