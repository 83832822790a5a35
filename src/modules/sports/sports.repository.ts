import type { SqlConnection, SqlStatement } from '../../common/sql/sql-connection.js';

/** A stored sports event (SCHEDULED and LIVE are not stored: they follow the clock). */
export interface SportsEventRow {
  id: string;
  sport: string;
  league: string;
  title: string;
  home: string;
  away: string;
  start_time: string;
  home_score: number | null;
  away_score: number | null;
  final_at: string | null;
}

export type EventStatus = 'SCHEDULED' | 'LIVE' | 'FINAL';

export interface EventFilter {
  sport?: string;
  league?: string;
  status?: EventStatus;
}

/** A market linked to an event, as the final needs it. */
export interface LinkedMarketRow {
  id: string;
  status: string;
  outcome: string | null;
  event_rule: string | null;
}

export interface LeagueCountRow {
  sport: string;
  league: string;
  event_count: number;
  market_count: number;
}

const COLUMNS =
  'id, sport, league, title, home, away, start_time, home_score, away_score, final_at';

/**
 * The sports events of one world's database (plain SQL on its connection; the schema is
 * migration SportsEvents1763769600020's). Status filters compare start_time with the service
 * clock's time passed in, so a status moves with the clock and is never stored stale.
 */
export class SportsRepository {
  private readonly pageStmt: SqlStatement;
  private readonly oneStmt: SqlStatement;
  private readonly marketIdsStmt: SqlStatement;
  private readonly linkedStmt: SqlStatement;
  private readonly finishStmt: SqlStatement;
  private readonly leaguesStmt: SqlStatement;

  constructor(db: SqlConnection) {
    this.pageStmt = db.prepare(
      `SELECT ${COLUMNS} FROM sports_events
       WHERE (CAST(@sport AS TEXT) IS NULL OR sport = @sport)
         AND (CAST(@league AS TEXT) IS NULL OR league = @league)
         AND (CAST(@status AS TEXT) IS NULL
           OR (@status = 'FINAL' AND final_at IS NOT NULL)
           OR (@status = 'LIVE' AND final_at IS NULL AND start_time <= @now)
           OR (@status = 'SCHEDULED' AND final_at IS NULL AND start_time > @now))
         AND (CAST(@after_time AS TEXT) IS NULL OR start_time > @after_time
           OR (start_time = @after_time AND id > @after_id))
       ORDER BY start_time, id LIMIT @take`,
    );
    this.oneStmt = db.prepare(`SELECT ${COLUMNS} FROM sports_events WHERE id = ?`);
    this.marketIdsStmt = db.prepare(
      `SELECT event_id, id FROM markets
       WHERE event_id IN (SELECT value FROM json_each(?)) ORDER BY event_id, id`,
    );
    this.linkedStmt = db.prepare(
      'SELECT id, status, outcome, event_rule FROM markets WHERE event_id = ? ORDER BY id',
    );
    this.finishStmt = db.prepare(
      `UPDATE sports_events SET home_score = ?, away_score = ?, final_at = ?
       WHERE id = ? AND final_at IS NULL`,
    );
    this.leaguesStmt = db.prepare(
      `SELECT e.sport, e.league, COUNT(DISTINCT e.id) AS event_count, COUNT(m.id) AS market_count
       FROM sports_events e LEFT JOIN markets m ON m.event_id = e.id
       GROUP BY e.sport, e.league ORDER BY e.sport, e.league`,
    );
  }

  /** Up to `take` events after (start_time, id) `after`, in that order. */
  page(f: EventFilter, now: string, after: string[] | undefined, take: number): SportsEventRow[] {
    return this.pageStmt.all({
      sport: f.sport ?? null,
      league: f.league ?? null,
      status: f.status ?? null,
      now,
      after_time: after?.[0] ?? null,
      after_id: after?.[1] ?? null,
      take,
    }) as SportsEventRow[];
  }

  one(id: string): SportsEventRow | undefined {
    return this.oneStmt.get(id) as SportsEventRow | undefined;
  }

  /** The linked market ids of each event, ordered by id (one statement for a page). */
  marketIds(eventIds: string[]): Map<string, string[]> {
    const byEvent = new Map<string, string[]>(eventIds.map((id) => [id, []]));
    const rows = this.marketIdsStmt.all(JSON.stringify(eventIds)) as {
      event_id: string;
      id: string;
    }[];
    for (const r of rows) byEvent.get(r.event_id)?.push(r.id);
    return byEvent;
  }

  linkedMarkets(eventId: string): LinkedMarketRow[] {
    return this.linkedStmt.all(eventId) as LinkedMarketRow[];
  }

  /** Records the final score; false when the event was already final. */
  finish(id: string, home: number, away: number, at: string): boolean {
    return this.finishStmt.run(home, away, at, id).changes === 1;
  }

  leagues(): LeagueCountRow[] {
    return this.leaguesStmt.all() as LeagueCountRow[];
  }
}
