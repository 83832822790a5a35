/**
 * What one WebSocket connection may send: a token bucket of `burst` messages refilled at `rate`
 * per second. A message past it is refused (not handled). Refusals fill a second bucket of the
 * same size, drained at the same rate: a client that keeps sending well past its budget overflows
 * it and is closed, so a flood costs the server a bounded amount of work, while a client that
 * briefly overshoots only loses the messages it sent too fast. A message whose work grows with
 * its content (a subscribe: a snapshot per orderbook channel) pays for the rest when it is
 * handled ({@link spend}), or is refused then, so the budget bounds the work, not just the frames.
 */
export type BudgetVerdict =
  /** Handle the message. */
  | 'ok'
  /** Refused, the first of a run: tell the client. */
  | 'refuse'
  /** Refused, the client was already told in this run. */
  | 'quiet'
  /** Refused, and the client kept sending past its budget: close the connection. */
  | 'close';

export class MessageBudget {
  private tokens: number;
  private strikes = 0;
  private at: number;
  /** A refusal was answered and no message has been handled since. */
  private told = false;
  /** Closed for flooding: everything after is refused quietly. */
  private over = false;

  constructor(
    readonly rate: number,
    readonly burst: number,
    now: number,
  ) {
    this.tokens = burst;
    this.at = now;
  }

  take(now: number): BudgetVerdict {
    if (this.over) return 'quiet';
    this.refill(now);
    if (this.tokens >= 1) {
      this.tokens -= 1;
      this.told = false;
      return 'ok';
    }
    this.strikes += 1;
    if (this.strikes > this.burst) {
      this.over = true;
      return 'close';
    }
    if (this.told) return 'quiet';
    this.told = true;
    return 'refuse';
  }

  /**
   * Spends `units` more for a message let through, now that it is handled (its work beyond the
   * unit it paid on arrival). False, and nothing spent, when the budget cannot cover them now:
   * the caller refuses the message then.
   */
  spend(units: number, now: number): boolean {
    if (units <= 0) return true;
    this.refill(now);
    if (this.tokens < units) return false;
    this.tokens -= units;
    return true;
  }

  /** Milliseconds until `units` (default one message) would be covered. */
  retryAfterMs(units = 1): number {
    return Math.max(1, Math.ceil(((units - this.tokens) / this.rate) * 1000));
  }

  private refill(now: number): void {
    // A clock that went back refills nothing (and does not bank the gap for later).
    const elapsed = now > this.at ? now - this.at : 0;
    this.at = now;
    if (elapsed > 0) {
      const refill = (elapsed / 1000) * this.rate;
      this.tokens = Math.min(this.burst, this.tokens + refill);
      this.strikes = Math.max(0, this.strikes - refill);
    }
  }
}
