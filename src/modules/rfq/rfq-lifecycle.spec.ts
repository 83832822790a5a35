import { describe, expect, it } from '@jest/globals';
import type { WorldDatabases } from '../worlds/world-databases.service.js';
import type { WorldClocks } from '../worlds/world-clocks.service.js';
import type { EngineRegistry } from '../trading/engine-registry.js';
import type { RfqNotices } from './rfq-notices.service.js';
import { RfqLifecycle } from './rfq-lifecycle.service.js';
import type { RfqRow } from './rfq.repository.js';

/**
 * The expiry sweep reads the due quotes and RFQs (two blocking round trips on PostgreSQL) only
 * when they can have changed: not again at the instant where the last sweep found none due.
 */
describe('RfqLifecycle.expireDue', () => {
  function rig() {
    const clock = { now: Date.parse('2026-11-22T12:00:00.000Z') };
    const looks: string[] = [];
    const due: RfqRow[] = [];
    const repo = {
      dueQuotes: (now: string) => (looks.push(`quotes@${now}`), []),
      dueRfqs: (now: string) => (looks.push(`rfqs@${now}`), due.splice(0)),
      endRfq: () => true,
      openQuotesOf: () => [],
    };
    const worlds = {
      perWorld: () => ({ get: () => repo }),
      onUnload: () => {},
    } as unknown as WorldDatabases;
    const clocks = { for: () => ({ now: () => clock.now }) } as unknown as WorldClocks;
    const notices = { rfqExpired: () => {}, rfqClosed: () => {} } as unknown as RfqNotices;
    const lifecycle = new RfqLifecycle(worlds, {} as EngineRegistry, clocks, notices);
    return { lifecycle, clock, looks, due };
  }

  it('looks again only once the clock has moved, or after a sweep that ended something', () => {
    const { lifecycle, clock, looks, due } = rig();
    lifecycle.expireDue('test');
    lifecycle.expireDue('test');
    expect(looks).toEqual(['quotes@2026-11-22T12:00:00.000Z', 'rfqs@2026-11-22T12:00:00.000Z']);
    clock.now += 1000;
    due.push({ id: 'rfq_1', status: 'OPEN' } as RfqRow);
    lifecycle.expireDue('test');
    lifecycle.expireDue('test');
    lifecycle.expireDue('test');
    expect(looks.slice(2)).toEqual([
      'quotes@2026-11-22T12:00:01.000Z',
      'rfqs@2026-11-22T12:00:01.000Z',
      // The sweep ended an RFQ: the next one looks once more, then rests.
      'quotes@2026-11-22T12:00:01.000Z',
      'rfqs@2026-11-22T12:00:01.000Z',
    ]);
  });
});
