import type { SqlConnection, SqlStatement } from '../../common/sql/sql-connection.js';
import type { MarketCategory, MarketStatus } from '../markets/entities/market.entity.js';

/** A created market as POST /markets writes it (the engine adds the book in the same commit). */
export interface NewMarketRow {
  id: string;
  slug: string;
  title: string;
  description: string;
  category: MarketCategory;
  closeTime: string;
  referencePrice: number;
  indexSymbol: string | null;
  strikeCents: number | null;
  eventId: string | null;
  creatorId: string;
  at: string;
}

/** What PATCH and resolve judge a market by. */
export interface OwnedMarketRow {
  id: string;
  creator_id: string | null;
  title: string;
  description: string;
  status: MarketStatus;
  reference_price: number;
  close_time: string;
}

/**
 * The markets of one world's engine database as POST /markets and PATCH /markets/{id} write
 * them: prepared statements on the connection, all synchronous, so a count, a slug check and the
 * insert run with nothing in between (no other request interleaves on better-sqlite3).
 */
export class MarketCreationRepository {
  private readonly insertStmt: SqlStatement;
  private readonly slugStmt: SqlStatement;
  private readonly openCountStmt: SqlStatement;
  private readonly rowStmt: SqlStatement;
  private readonly updateStmt: SqlStatement;
  private readonly eventStmt: SqlStatement;

  constructor(db: SqlConnection) {
    this.insertStmt = db.prepare(
      `INSERT INTO markets (id, slug, title, description, category, status, outcome, close_time,
         reference_price, index_symbol, strike_cents, last_price, volume, event_id, event_rule,
         creator_id, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, 'OPEN', NULL, ?, ?, ?, ?, NULL, 0, ?, NULL, ?, ?, ?)`,
    );
    this.slugStmt = db.prepare('SELECT 1 AS found FROM markets WHERE slug = ?');
    // OPEN and HALTED: a halted market is not closed, so halting one does not free a place.
    this.openCountStmt = db.prepare(
      `SELECT COUNT(*) AS n FROM markets WHERE creator_id = ? AND status IN ('OPEN', 'HALTED')`,
    );
    this.rowStmt = db.prepare(
      `SELECT id, creator_id, title, description, status, reference_price, close_time
       FROM markets WHERE id = ?`,
    );
    this.updateStmt = db.prepare(
      `UPDATE markets SET title = ?, description = ?, close_time = ?, updated_at = ? WHERE id = ?`,
    );
    this.eventStmt = db.prepare('SELECT 1 AS found FROM sports_events WHERE id = ?');
  }

  insert(m: NewMarketRow): void {
    this.insertStmt.run(
      m.id,
      m.slug,
      m.title,
      m.description,
      m.category,
      m.closeTime,
      m.referencePrice,
      m.indexSymbol,
      m.strikeCents,
      m.eventId,
      m.creatorId,
      m.at,
      m.at,
    );
  }

  slugTaken(slug: string): boolean {
    return this.slugStmt.get(slug) !== undefined;
  }

  openMarketsOf(creatorId: string): number {
    return (this.openCountStmt.get(creatorId) as { n: number }).n;
  }

  market(id: string): OwnedMarketRow | undefined {
    return this.rowStmt.get(id) as OwnedMarketRow | undefined;
  }

  update(id: string, f: { title: string; description: string; closeTime: string }, at: string) {
    this.updateStmt.run(f.title, f.description, f.closeTime, at, id);
  }

  eventExists(id: string): boolean {
    return this.eventStmt.get(id) !== undefined;
  }
}
