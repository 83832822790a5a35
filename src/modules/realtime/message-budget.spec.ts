import { describe, expect, it } from '@jest/globals';
import { MessageBudget } from './message-budget.js';

function takeN(b: MessageBudget, n: number, now: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(b.take(now));
  return out;
}

describe('MessageBudget', () => {
  it('handles a burst, then refuses: only the first refusal of a run is told', () => {
    const b = new MessageBudget(10, 5, 1_000);
    expect(takeN(b, 5, 1_000)).toEqual(['ok', 'ok', 'ok', 'ok', 'ok']);
    expect(takeN(b, 3, 1_000)).toEqual(['refuse', 'quiet', 'quiet']);
    // 100 ms at 10/s refills one message; after it a new run is told again.
    expect(b.retryAfterMs()).toBe(100);
    expect(takeN(b, 2, 1_100)).toEqual(['ok', 'refuse']);
  });

  it('refills at its rate up to the burst, not beyond', () => {
    const b = new MessageBudget(10, 5, 0);
    takeN(b, 5, 0);
    expect(takeN(b, 3, 200)).toEqual(['ok', 'ok', 'refuse']);
    // An hour idle refills the burst only.
    expect(takeN(b, 6, 3_600_000)).toEqual(['ok', 'ok', 'ok', 'ok', 'ok', 'refuse']);
  });

  it('closes a client that keeps sending far past its budget, not one that overshoots briefly', () => {
    const b = new MessageBudget(10, 5, 0);
    const first = takeN(b, 10, 0);
    expect(first.slice(0, 5)).toEqual(['ok', 'ok', 'ok', 'ok', 'ok']);
    expect(first).not.toContain('close');
    // Five refusals so far, as many as the burst: the sixth overflows and closes.
    expect(takeN(b, 1, 0)).toEqual(['close']);
  });

  it('forgives refusals at its rate, so a client sending at twice the rate is never closed', () => {
    const b = new MessageBudget(10, 5, 0);
    const verdicts: string[] = [];
    // 20 messages a second for a minute: half are handled, none closes.
    for (let t = 0; t < 60_000; t += 50) verdicts.push(b.take(t));
    expect(verdicts).not.toContain('close');
    const handled = verdicts.filter((v) => v === 'ok').length;
    expect(handled).toBeGreaterThanOrEqual(600);
    expect(handled).toBeLessThanOrEqual(606);
  });

  it('a clock that goes back refills nothing and banks nothing', () => {
    const b = new MessageBudget(10, 2, 10_000);
    takeN(b, 2, 10_000);
    expect(b.take(5_000)).toBe('refuse');
    // The clock went back to 5,000: the next 100 ms count from there (one message refilled),
    // and the 5 s between 5,000 and 10,000 were not banked.
    expect(b.take(5_100)).toBe('ok');
    expect(b.take(5_100)).toBe('refuse');
  });

  it('once closed, every later message is refused quietly', () => {
    const b = new MessageBudget(10, 1, 0);
    expect(takeN(b, 3, 0)).toEqual(['ok', 'refuse', 'close']);
    expect(takeN(b, 2, 60_000)).toEqual(['quiet', 'quiet']);
  });

  it('spends extra units for a costly message when it is handled, or refuses it then', () => {
    const b = new MessageBudget(10, 10, 0);
    expect(b.take(0)).toBe('ok');
    expect(b.spend(8, 0)).toBe(true); // a subscribe of 9 channels: 1 left
    expect(b.spend(3, 0)).toBe(false); // another of 4 is refused, and spends nothing
    expect(b.retryAfterMs(3)).toBe(200);
    expect(b.spend(3, 200)).toBe(true);
    expect(b.take(200)).toBe('refuse');
    expect(b.spend(0, 200)).toBe(true);
  });
});
