import { describe, expect, it, jest } from '@jest/globals';
import type { EngineEvent } from '../../engine/index.js';
import { HOUSE_ACCOUNT } from '../trading/engine-runtime.js';
import { InProcessEventBus, type CommittedEvents } from '../trading/event-bus.js';
import {
  marketResolvedNotices,
  MarketResolvedNoticesService,
} from './market-resolved-notices.service.js';
import type { NotificationsService } from './notifications.service.js';

const settled = (accountId: string, yes: number, no: number, payout: number): EngineEvent => ({
  type: 'position.settled',
  accountId,
  marketId: 'mkt_1',
  outcome: 'YES',
  yes,
  no,
  payout,
  realizedPnl: payout - 40 * (yes + no),
});

describe('marketResolvedNotices', () => {
  it('one MARKET_RESOLVED per settled holder, in the batch world, never the house', () => {
    const events: EngineEvent[] = [
      { type: 'market.status', marketId: 'mkt_1', status: 'CLOSED' },
      settled('usr_a', 3, 0, 300),
      settled(HOUSE_ACCOUNT, 0, 7, 0),
      settled('usr_b', 1, 2, 100),
      { type: 'market.resolved', marketId: 'mkt_1', outcome: 'YES', timestamp: 0 },
    ];
    expect(marketResolvedNotices(events, 'test')).toEqual([
      {
        userId: 'usr_a',
        environment: 'test',
        type: 'MARKET_RESOLVED',
        title: 'Market resolved YES',
        body: 'Market mkt_1 resolved YES. Your 3 YES contracts paid 300 cents.',
        data: { market_id: 'mkt_1', outcome: 'YES', payout_cents: 300 },
      },
      {
        userId: 'usr_b',
        environment: 'test',
        type: 'MARKET_RESOLVED',
        title: 'Market resolved YES',
        body: 'Market mkt_1 resolved YES. Your 1 YES and 2 NO contracts paid 100 cents.',
        data: { market_id: 'mkt_1', outcome: 'YES', payout_cents: 100 },
      },
    ]);
    expect(marketResolvedNotices(events, 'live').map((n) => n.environment)).toEqual([
      'live',
      'live',
    ]);
  });

  it('a batch without a settlement gives none', () => {
    expect(
      marketResolvedNotices(
        [{ type: 'market.status', marketId: 'mkt_1', status: 'HALTED' }],
        'live',
      ),
    ).toEqual([]);
  });
});

describe('MarketResolvedNoticesService', () => {
  it('notifies for batches committed here, never for another instance’s (it notified already)', () => {
    const bus = new InProcessEventBus();
    const notifyAll = jest.fn();
    const service = new MarketResolvedNoticesService(bus, {
      notifyAll,
    } as unknown as NotificationsService);
    service.onModuleInit();
    const settled: CommittedEvents = {
      environment: 'test',
      world: 'test',
      committedAt: 1,
      events: [
        {
          type: 'position.settled',
          accountId: 'usr_1',
          marketId: 'mkt_1',
          outcome: 'YES',
          yes: 2,
          no: 0,
          payout: 200,
          realizedPnl: 100,
        },
      ],
    };
    bus.publish({ ...settled, remote: true });
    expect(notifyAll).not.toHaveBeenCalled();
    bus.publish(settled);
    expect(notifyAll).toHaveBeenCalledTimes(1);
    expect(notifyAll.mock.calls[0][0]).toMatchObject([
      { userId: 'usr_1', environment: 'test', type: 'MARKET_RESOLVED' },
    ]);
    service.onModuleDestroy();
  });
});
