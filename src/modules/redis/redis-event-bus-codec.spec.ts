import { describe, expect, it } from '@jest/globals';
import type { EngineEvent } from '../../engine/index.js';
import { standardRig } from '../../engine/testing.js';
import type { CommittedEvents } from '../trading/event-bus.js';
import {
  compareIds,
  decodeEntry,
  encodeBatch,
  seqKey,
  streamKey,
  worldOfKey,
} from './redis-event-bus-codec.js';

/** A batch through the stream's encoding and back, as XREAD hands the fields over. */
function roundTrip(batch: CommittedEvents): CommittedEvents | null {
  return decodeEntry(['i', 'ins_a', 's', '7', 'b', encodeBatch(batch)]).batch;
}

describe('stream entry codec', () => {
  it('every event type the engine emits survives JSON exactly (numbers, nulls, nested objects)', () => {
    const rig = standardRig();
    const e = rig.engine;
    // Rest, trade (fractional average prices), amend, cancel, reset, RFQ hold and its release,
    // close, resolve and settle: the whole event vocabulary.
    rig.limit('alice', 'm1', 'BUY', 'YES', 40, 3);
    const resting = rig.id(rig.limit('bob', 'm1', 'BUY', 'YES', 30, 5, { clientOrderId: 'c-1' }));
    rig.ok(rig.record(e.amendOrder(resting, { price: 31 }, 'bob')));
    rig.limit('carol', 'm1', 'SELL', 'YES', 39, 2);
    rig.limit('carol', 'm1', 'SELL', 'NO', 45, 3);
    rig.ok(rig.record(e.cancelOrder(resting, 'bob')));
    rig.ok(rig.record(e.resetAccount('dave', 50_000)));
    rig.ok(rig.record(e.setMarketStatus('m2', 'CLOSED')));
    rig.ok(rig.record(e.resolveMarket('m1', 'YES')));
    const events: EngineEvent[] = rig.events;
    const types = new Set(events.map((x) => x.type));
    for (const t of [
      'order.accepted',
      'order.rested',
      'trade',
      'order.updated',
      'order.amended',
      'order.cancelled',
      'position.changed',
      'balance.changed',
      'book.level',
      'account.reset',
      'market.status',
      'market.resolved',
      'position.settled',
    ])
      expect(types).toContain(t);
    const batch: CommittedEvents = {
      environment: 'test',
      world: 'wld_abc',
      events,
      committedAt: 1_800_000_000_123,
    };
    // toStrictEqual: no field lost, none turned into another type, no undefined dropped.
    expect(roundTrip(batch)).toStrictEqual(batch);
    const rebuilt: CommittedEvents = {
      environment: 'live',
      world: 'live',
      events: [],
      committedAt: 1,
      rebuilt: true,
    };
    expect(roundTrip(rebuilt)).toStrictEqual(rebuilt);
  });

  it('never sends the receiver-side annotations', () => {
    const b: CommittedEvents = {
      environment: 'test',
      world: 'test',
      events: [],
      committedAt: 5,
      rebuilt: true,
      remote: true,
      lost: true,
    };
    expect(JSON.parse(encodeBatch(b))).toStrictEqual({
      environment: 'test',
      world: 'test',
      events: [],
      committedAt: 5,
      rebuilt: true,
    });
  });

  it('decodes a bare gap marker and its fields', () => {
    expect(decodeEntry(['i', 'ins_b', 's', '12', 'g', '1'])).toEqual({
      instance: 'ins_b',
      seq: 12,
      gap: true,
      batch: null,
    });
  });

  it('keys a world with a hash tag, and reads it back', () => {
    expect(streamKey('wld_x1')).toBe('events:{wld_x1}');
    expect(seqKey('test')).toBe('events:{test}:seq');
    expect(worldOfKey(streamKey('wld_x1'))).toBe('wld_x1');
    expect(worldOfKey('lim:{a}:b')).toBeNull();
  });

  it('orders stream ids as Redis does', () => {
    expect(compareIds('1700000000000-0', '1700000000000-1')).toBe(-1);
    expect(compareIds('1700000000001-0', '1700000000000-9')).toBe(1);
    expect(compareIds('0-0', '0-0')).toBe(0);
    expect(compareIds('999-10', '1000-0')).toBe(-1);
  });
});
