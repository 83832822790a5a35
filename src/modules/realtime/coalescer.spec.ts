import { describe, expect, it } from '@jest/globals';
import { Coalescer, type CoalescerTimers } from './coalescer.js';
import type { Connection } from './connection.js';

/** Scripted wall clock and timers: `advance` runs the timers that fall due. */
function scripted(): CoalescerTimers & { advance(ms: number): void; pending(): number } {
  let now = 1000;
  let timers: { at: number; run: () => void }[] = [];
  return {
    now: () => now,
    schedule: (ms, run) => {
      timers.push({ at: now + ms, run });
      return {};
    },
    advance(ms) {
      now += ms;
      const due = timers.filter((t) => t.at <= now);
      timers = timers.filter((t) => t.at > now);
      for (const t of due) t.run();
    },
    pending: () => timers.length,
  };
}

/** A fan-out of one message to a connection that records when it is flushed. */
function fanOut(co: Coalescer, conn: { flushes: number }): void {
  const batch = co.batch();
  if (!batch.connections.includes(conn as never)) batch.connections.push(conn as never);
  co.release();
}

function connection(): { flushes: number } & Pick<Connection, 'flush'> {
  const c = {
    flushes: 0,
    flush: () => {
      c.flushes++;
    },
  };
  return c;
}

describe('Coalescer', () => {
  it('writes a fan-out at once when nothing was written within the window (quiet feed: no delay)', () => {
    const t = scripted();
    const co = new Coalescer(4, t);
    const c = connection();
    fanOut(co, c);
    expect(c.flushes).toBe(1);
    t.advance(10);
    fanOut(co, c);
    expect(c.flushes).toBe(2);
    expect(t.pending()).toBe(0);
  });

  it('holds the fan-outs within the window and writes them together when it ends', () => {
    const t = scripted();
    const co = new Coalescer(4, t);
    const c = connection();
    fanOut(co, c); // t=0: written at once
    t.advance(1);
    fanOut(co, c); // t=1: within 4 ms of the last write: held, a window opens until t=5
    t.advance(2);
    fanOut(co, c); // t=3: held in the same batch
    expect(c.flushes).toBe(1);
    expect(t.pending()).toBe(1); // one timer, however many fan-outs
    t.advance(1.9); // t=4.9
    expect(c.flushes).toBe(1);
    t.advance(0.1); // t=5: the window of the first held message ends
    expect(c.flushes).toBe(2);
  });

  it('counts the window from the first held message, not from the last write', () => {
    // A steady stream (a message every 3 ms, window 5): each write carries a full window's
    // messages, and no message waits longer than the window.
    const t = scripted();
    const co = new Coalescer(5, t);
    const c = connection();
    fanOut(co, c); // t=0: written
    t.advance(3);
    fanOut(co, c); // t=3: held until t=8
    t.advance(3);
    fanOut(co, c); // t=6: joins it
    t.advance(1.9);
    expect(c.flushes).toBe(1);
    t.advance(0.1); // t=8: the held two leave in one write, 5 ms after the first of them
    expect(c.flushes).toBe(2);
    t.advance(1);
    fanOut(co, c); // t=9: 1 ms after a write: held for a full window, until t=14
    t.advance(3);
    fanOut(co, c); // t=12
    t.advance(1.9);
    expect(c.flushes).toBe(2);
    t.advance(0.1);
    expect(c.flushes).toBe(3);
    t.advance(5);
    fanOut(co, c); // t=19: nothing written for 5 ms: leaves at once
    expect(c.flushes).toBe(4);
    expect(t.pending()).toBe(0);
  });

  it('counts the window from the end of the last write, however long the write took', () => {
    const t = scripted();
    const co = new Coalescer(4, t);
    // Writing to this connection takes 6 ms (a fan-out to 1,000 sockets on a busy machine).
    const c = { flushes: 0, flush: () => (c.flushes++, t.advance(6)) };
    fanOut(co, c); // t=0: written, done at t=6
    expect(c.flushes).toBe(1);
    t.advance(1);
    fanOut(co, c); // t=7: 1 ms after the write ended: held, not written alone
    expect(c.flushes).toBe(1);
    t.advance(4); // t=11
    expect(c.flushes).toBe(2);
  });

  it('delays a message by at most the window', () => {
    const t = scripted();
    const co = new Coalescer(5, t);
    const c = connection();
    fanOut(co, c);
    t.advance(0.5);
    fanOut(co, c); // t=0.5: held for 5 ms
    t.advance(4.9);
    expect(c.flushes).toBe(1);
    t.advance(0.1); // t=5.5: written, 5 ms after it was held
    expect(c.flushes).toBe(2);
  });

  it('a fan-out that held nothing opens no window', () => {
    const t = scripted();
    const co = new Coalescer(4, t);
    co.batch();
    co.release();
    const c = connection();
    fanOut(co, c);
    expect(c.flushes).toBe(1);
  });

  it('window 0 writes every fan-out when it ends', () => {
    const t = scripted();
    const co = new Coalescer(0, t);
    const c = connection();
    for (let i = 0; i < 3; i++) fanOut(co, c);
    expect(c.flushes).toBe(3);
    expect(t.pending()).toBe(0);
  });

  it('flushNow writes what is held at once', () => {
    const t = scripted();
    const co = new Coalescer(4, t);
    const c = connection();
    fanOut(co, c);
    fanOut(co, c);
    expect(c.flushes).toBe(1);
    co.flushNow();
    expect(c.flushes).toBe(2);
    t.advance(4); // the window's timer finds nothing left
    expect(c.flushes).toBe(2);
  });
});
