import { afterAll, describe, expect, it } from '@jest/globals';
import { TempEngineDbs } from '../../../test/support/engine-dbs.js';
import { EffectStore } from './stores/effect.store.js';
import { TradingRepository } from './trading.repository.js';

describe('idempotency effects in an engine database', () => {
  const dbs = new TempEngineDbs('svc-effects-');
  afterAll(() => dbs.close());

  it('reads what recordEffect wrote for the key’s current use, and forgets expired ones', async () => {
    const { db } = await dbs.open();
    const repo = new TradingRepository(db, 'test', 'house', () => 'txn_1');
    const store = new EffectStore(db);
    const at = Date.parse('2026-11-22T12:00:00.000Z');
    repo.transaction(() =>
      repo.effects.record(
        { ownerId: 'test:usr_1', key: 'k-1', orderIds: ['ord_1', 'ord_2'], referenceIds: [] },
        at,
      ),
    );
    repo.transaction(() =>
      repo.effects.record(
        { ownerId: 'test:usr_1', key: 'k-2', orderIds: [], referenceIds: ['dep_1'] },
        at + 60_000,
      ),
    );

    expect(store.effectOf('test:usr_1', 'k-1', '2026-11-22T11:00:00.000Z')).toEqual({
      orderIds: ['ord_1', 'ord_2'],
      referenceIds: [],
    });
    // Another owner's key of the same name, and an effect older than the key's current use.
    expect(store.effectOf('test:usr_2', 'k-1', '2026-11-22T11:00:00.000Z')).toBeNull();
    expect(store.effectOf('test:usr_1', 'k-1', '2026-11-22T12:00:00.001Z')).toBeNull();

    // What a writer's fence loads at restore: every effect since, oldest first.
    expect(store.recordedSince('2026-11-22T11:00:00.000Z')).toEqual([
      { ownerId: 'test:usr_1', key: 'k-1', at },
      { ownerId: 'test:usr_1', key: 'k-2', at: at + 60_000 },
    ]);
    expect(store.recordedSince('2026-11-22T12:00:00.001Z').map((e) => e.key)).toEqual(['k-2']);

    store.forgetBefore('2026-11-22T12:00:30.000Z');
    expect(store.effectOf('test:usr_1', 'k-1', '2026-11-22T11:00:00.000Z')).toBeNull();
    expect(store.effectOf('test:usr_1', 'k-2', '2026-11-22T11:00:00.000Z')).toEqual({
      orderIds: [],
      referenceIds: ['dep_1'],
    });
  });
});
