import { Injectable, Logger } from '@nestjs/common';
import type { Environment } from '../../common/environment.js';
import { DomainError } from '../../common/errors/domain-error.js';
import { ConfigService } from '../../config/config.service.js';
import { EngineRegistry } from '../trading/engine-registry.js';
import { HOUSE_ACCOUNT } from '../trading/engine-runtime.js';
import { RfqLifecycle } from './rfq-lifecycle.service.js';
import { houseQuote } from './rfq-rules.js';
import type { RfqRow } from './rfq.repository.js';
import { SubmitQuoteUseCase } from './use-cases/submit-quote/submit-quote.use-case.js';

/** How long a house quote binds; it is refreshed before it lapses while its RFQ stays OPEN. */
export const HOUSE_QUOTE_SECONDS = 30;
/** A house quote this close to lapsing is replaced by a fresh one. */
const REFRESH_BEFORE_MS = 5_000;

/**
 * The paper world's house responder: it quotes every paper RFQ two-way around the market's
 * reference price (RFQ_HOUSE_SPREAD_CENTS either side) at once when the RFQ is created, through
 * the same quote path as a person (the engine holds its collateral), and re-quotes while the RFQ
 * is OPEN whenever the reference has moved or its quote is about to lapse. It never quotes in the
 * live world, and a market without a reference (or not OPEN) gets no house quote.
 */
@Injectable()
export class RfqHouseResponder {
  private readonly log = new Logger('RfqHouse');

  constructor(
    private readonly life: RfqLifecycle,
    private readonly engines: EngineRegistry,
    private readonly config: ConfigService,
    private readonly submit: SubmitQuoteUseCase,
  ) {}

  /** A new RFQ: quoted on the next turn (after its creation is answered), paper only. */
  onCreated(world: Environment, rfq: RfqRow): void {
    if (world !== 'test') return;
    setImmediate(() => {
      try {
        this.quote(rfq.id, rfq.market_id);
      } catch (err) {
        this.log.warn(`house quote on ${rfq.id} failed: ${String(err)}`);
      }
    });
  }

  /** Re-quotes the paper RFQs whose house quote is missing, stale or about to lapse. */
  refresh(now: number): void {
    const repo = this.life.repos.get('test');
    for (const rfq of repo.openRfqs()) {
      const current = repo.openQuoteOf(rfq.id, HOUSE_ACCOUNT);
      const target = this.target(rfq.market_id);
      if (target === null) continue;
      if (
        current !== undefined &&
        current.bid === target.bid &&
        current.ask === target.ask &&
        Date.parse(current.expires_at) - now > REFRESH_BEFORE_MS
      ) {
        continue;
      }
      try {
        this.quote(rfq.id, rfq.market_id);
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
        // A market that closed or an RFQ that ended meanwhile: nothing to quote.
      }
    }
  }

  private quote(rfqId: string, marketId: string): void {
    const target = this.target(marketId);
    if (target === null) return;
    this.submit.execute('test', HOUSE_ACCOUNT, rfqId, {
      bid: target.bid ?? undefined,
      ask: target.ask ?? undefined,
      expires_in_seconds: HOUSE_QUOTE_SECONDS,
    });
  }

  private target(marketId: string): { bid: number | null; ask: number | null } | null {
    const reference = this.engines.get('test').reference(marketId);
    if (reference === null) return null;
    return houseQuote(reference, this.config.values.rfqHouseSpreadCents);
  }
}
