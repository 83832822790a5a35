import { afterEach, describe, expect, it } from '@jest/globals';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { WalCheckpointService } from '../../src/database/wal-checkpoint.service.js';
import type { Running } from '../support/harness.js';
import { as, limit, place, startOrdersApp, trader, TRADABLE } from '../support/orders.js';

// SQLite's WAL checkpoints: these boots stay on SQLite files in the PostgreSQL pass (`sqliteFiles`).
/** The writer connection's automatic checkpoint threshold, in pages (0 = off). */
function autocheckpoint(svc: Running, name: string): number {
  const ds = svc.app.get<DataSource>(getDataSourceToken(name), { strict: false });
  const db = (ds.driver as unknown as { databaseConnection: { pragma(s: string): unknown } })
    .databaseConnection;
  return (db.pragma('wal_autocheckpoint') as { wal_autocheckpoint: number }[])[0]
    .wal_autocheckpoint;
}

describe('database: WAL checkpoints off the request thread', () => {
  let svc: Running | null = null;
  afterEach(async () => {
    await svc?.close();
    svc = null;
  });

  it('a worker checkpoints all three databases; commits no longer checkpoint', async () => {
    svc = await startOrdersApp({ sqliteFiles: true });
    const wal = svc.app.get(WalCheckpointService, { strict: false });
    expect(wal.running).toBe(true);
    for (const name of ['platform', 'live', 'paper']) expect(autocheckpoint(svc, name)).toBe(0);

    const t = await trader(svc);
    for (let i = 0; i < 20; i++) {
      const o = await place(svc, t, limit(TRADABLE[0], 'BUY', 'YES', 2 + (i % 5), 1));
      expect(o.status).toBe('OPEN');
    }
    const results = await wal.checkpointNow();
    expect(results.map((r) => r.file.split('/').pop())).toEqual([
      'platform.sqlite',
      'live.sqlite',
      'paper.sqlite',
    ]);
    for (const r of results) expect(r.error).toBeUndefined();
    const paper = results[2];
    expect(paper.log).toBeGreaterThan(0); // the orders were in the log ...
    expect(paper.checkpointed).toBe(paper.log); // ... and are now in the database file

    // Shut down and start again from the same files: nothing was lost on the way.
    const dataDir = svc.dataDir;
    await svc.close({ keepData: true });
    svc = await startOrdersApp({ dataDir, sqliteFiles: true });
    const again = await trader(svc);
    const listed = await as(again, `${svc.api}/orders?status=OPEN&limit=100`);
    expect(listed.status).toBe(200);
    expect(listed.body.data).toHaveLength(20);
  });

  it('SQLITE_CHECKPOINT_INTERVAL_MS=0 leaves checkpoints to SQLite inside commits', async () => {
    svc = await startOrdersApp({ env: { SQLITE_CHECKPOINT_INTERVAL_MS: '0' }, sqliteFiles: true });
    expect(svc.app.get(WalCheckpointService, { strict: false }).running).toBe(false);
    for (const name of ['platform', 'live', 'paper']) expect(autocheckpoint(svc, name)).toBe(1000);
  });
});
