import { Injectable } from '@nestjs/common';
import { iso } from '../../common/clock/iso.js';
import { isWorldId, type WorldId, type WorldName } from '../../common/environment.js';
import { EngineRegistry } from '../trading/engine-registry.js';
import type { EngineRuntime } from '../trading/engine-runtime.js';
import { WorldClocks } from '../worlds/world-clocks.service.js';
import { WorldDatabases } from '../worlds/world-databases.service.js';
import { RfqNotices } from './rfq-notices.service.js';
import { RfqRepository, type QuoteRow, type QuoteStatus, type RfqRow } from './rfq.repository.js';
import type { WorldScoped } from '../worlds/world-scoped.js';

/** Rows ended per sweep of each kind (the next second's sweep takes the rest). */
const SWEEP_CHUNK = 500;

/**
 * How RFQs and quotes end without trading, the one home of "a quote's hold is released when it
 * ends": withdrawal, replacement, cancellation, expiry, a sandbox reset. A quote's row leaves OPEN
 * in the same engine transaction that releases its hold, so an OPEN quote always has its hold and
 * an ended one never does. Each end is conditional on the row still being OPEN, so of two racing
 * enders (an accept and an expiry, say) exactly one wins. Every world keeps its RFQs in its own
 * database (an ephemeral world's in its file, gone with it) and ends them on its own clock.
 */
@Injectable()
export class RfqLifecycle {
  readonly repos: WorldScoped<RfqRepository>;
  /** Loaded ephemeral worlds whose stranded quotes were ended since they loaded. */
  private readonly checked = new Set<WorldId>();
  /** Per world, the clock's instant at which the last sweep found nothing due (see expireDue). */
  private readonly quietAt = new Map<WorldName, string>();

  constructor(
    worlds: WorldDatabases,
    private readonly engines: EngineRegistry,
    private readonly clocks: WorldClocks,
    private readonly notices: RfqNotices,
  ) {
    this.repos = worlds.perWorld((db) => new RfqRepository(db));
    worlds.onUnload((world) => {
      this.checked.delete(world);
      this.quietAt.delete(world);
    });
  }

  /** The world's time (an ephemeral world's own clock, POST /sandbox/clock moves it). */
  now(world: WorldName): number {
    return this.clocks.for(world).now();
  }

  nowIso(world: WorldName): string {
    return iso(this.now(world));
  }

  /**
   * The world's engine. A loaded one is taken as it is, without marking the world used: the
   * once-a-second sweep must not keep an idle world from unloading.
   */
  engine(world: WorldName): EngineRuntime {
    return this.engines.loaded(world) ?? this.engines.get(world);
  }

  /**
   * Ends an OPEN quote, releasing its hold in the same commit; false if it had ended already. A
   * hold the engine no longer has (a sandbox reset dropped it) leaves only the row to end.
   * `tell` sends the requester quote.cancelled.
   */
  endQuote(
    env: WorldName,
    quote: QuoteRow,
    status: Exclude<QuoteStatus, 'OPEN' | 'ACCEPTED'>,
    tell = true,
  ): boolean {
    const repo = this.repos.get(env);
    const now = this.nowIso(env);
    let ended = false;
    const released = this.engine(env).releaseQuote(quote.hold_id, () => {
      ended = repo.endQuote(quote.id, status, now);
    });
    if (!released.ok) ended = repo.endQuote(quote.id, status, now);
    if (ended && tell) {
      const rfq = repo.rfq(quote.rfq_id);
      if (rfq !== undefined) this.notices.quoteCancelled(env, rfq, { ...quote, status });
    }
    return ended;
  }

  /**
   * Ends an OPEN RFQ (CANCELLED or EXPIRED) and then its OPEN quotes; false if it had ended. The
   * RFQ leaves OPEN first, so no accept can take one of its quotes meanwhile.
   */
  endRfq(env: WorldName, rfq: RfqRow, status: 'CANCELLED' | 'EXPIRED'): boolean {
    const repo = this.repos.get(env);
    if (!repo.endRfq(rfq.id, status, this.nowIso(env))) return false;
    for (const q of repo.openQuotesOf(rfq.id)) {
      this.endQuote(env, q, status === 'EXPIRED' ? 'EXPIRED' : 'CANCELLED', false);
    }
    const ended = { ...rfq, status };
    if (status === 'EXPIRED') this.notices.rfqExpired(env, ended);
    else this.notices.rfqClosed(env, ended);
    return true;
  }

  /**
   * Ends what the world's clock has expired: quotes first (a quote never outlives its hold),
   * then RFQs with their quotes. Run about once a second (for the loaded worlds), after a world's
   * clock is advanced, and before every read or write that depends on it, so an expired RFQ or
   * quote is never accepted, listed OPEN or quoted. An ephemeral world, on its first sweep since
   * it loaded, first ends the quotes a stop left stranded (as the boot does for the others).
   */
  expireDue(env: WorldName): void {
    if (isWorldId(env) && !this.checked.has(env)) {
      this.endStranded(env);
      this.checked.add(env);
    }
    const repo = this.repos.get(env);
    const now = this.nowIso(env);
    // Nothing was due at this very instant last time, and nothing can have become due since:
    // an RFQ or a quote expires at least a second after the world's clock when it is made, so
    // only a moved clock makes one due. Each sweep and each RFQ read or write asked again
    // before: two blocking round trips on PostgreSQL while the clock stood still.
    if (this.quietAt.get(env) === now) return;
    const quotes = repo.dueQuotes(now, SWEEP_CHUNK);
    for (const q of quotes) this.endQuote(env, q, 'EXPIRED');
    const rfqs = repo.dueRfqs(now, SWEEP_CHUNK);
    for (const r of rfqs) this.endRfq(env, r, 'EXPIRED');
    if (quotes.length === 0 && rfqs.length === 0) this.quietAt.set(env, now);
    else this.quietAt.delete(env);
  }

  /** At boot: quotes left OPEN on ended RFQs by a stop in between are ended (holds released). */
  endStranded(env: WorldName): void {
    const repo = this.repos.get(env);
    for (const q of repo.strandedQuotes()) {
      const rfq = repo.rfq(q.rfq_id);
      this.endQuote(env, q, rfq?.status === 'EXPIRED' ? 'EXPIRED' : 'CANCELLED', false);
    }
  }
}
