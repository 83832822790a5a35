import { describe, expect, it } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { http } from '../support/harness.js';
import { as, NOON, startOrdersApp, trader } from '../support/orders.js';
import { SEED_EVENTS, seedEvent, SPORTS_SCOPES as SCOPES } from '../support/sports.js';
import { openDatabaseOf } from '../support/test-database.js';

const HOUR = 3_600_000;

/** The seeder on a restart: nothing doubled, a final kept, and what a database lacks added. */
describe('sports seeds across restarts', () => {
  it('keeps events and finals, and inserts the events (and markets) an existing database lacks', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-sports-'));
    const ended = seedEvent('nba-knicks-vs-heat');
    const missing = seedEvent('atp-alcaraz-vs-sinner');
    let svc = await startOrdersApp({ dataDir });
    try {
      const a = await trader(svc, undefined, { scopes: SCOPES });
      const res = await as(a, `${svc.api}/sandbox/sports/events/${ended.id}/final`, {
        method: 'POST',
        json: { home_score: 90, away_score: 80 },
      });
      expect(res.status).toBe(200);
    } finally {
      await svc.close({ keepData: true });
    }
    // A live database from before this event and its market were seeded.
    const db = openDatabaseOf(dataDir, 'live');
    db.prepare('DELETE FROM markets WHERE id = ?').run(missing.marketId);
    db.prepare('DELETE FROM sports_events WHERE id = ?').run(missing.id);
    db.close();
    const later = '2026-11-23T12:00:00.000Z';
    svc = await startOrdersApp({ dataDir, now: later });
    try {
      const a = await trader(svc, undefined, { scopes: SCOPES });
      const page = await http(`${svc.api}/sports/events?limit=200`);
      expect(page.body.data).toHaveLength(SEED_EVENTS.length);
      expect((await as(a, `${svc.api}/sports/events?limit=200`)).body.data).toHaveLength(
        SEED_EVENTS.length,
      );
      const paper = await as(a, `${svc.api}/sports/events/${ended.id}`);
      expect(paper.body).toMatchObject({ status: 'FINAL', score: { home: 90, away: 80 } });
      // Re-seeded relative to this start; its market is back, linked.
      const back = await http(`${svc.api}/sports/events/${missing.id}`);
      expect(back.body).toMatchObject({
        start_time: new Date(Date.parse(later) + missing.start_offset_hours! * HOUR).toISOString(),
        status: 'SCHEDULED',
        market_ids: [missing.marketId],
      });
      expect((await http(`${svc.api}/markets/${missing.marketId}`)).body).toMatchObject({
        status: 'OPEN',
        event_id: missing.id,
      });
      // The paper event kept its first start time.
      const kept = await as(a, `${svc.api}/sports/events/${missing.id}`);
      expect(kept.body.start_time).toBe(
        new Date(Date.parse(NOON) + missing.start_offset_hours! * HOUR).toISOString(),
      );
    } finally {
      await svc.close();
    }
  });
});
