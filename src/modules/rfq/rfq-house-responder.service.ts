import { Injectable, Logger } from '@nestjs/common';
import { isPaperWorld, type WorldName } from '../../common/environment.js';
import { DomainError } from '../../common/errors/domain-error.js';
import { ConfigService } from '../../config/config.service.js';
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
 * The paper worlds' house responder: it quotes every RFQ of the shared paper world and of each
 * ephemeral world two-way around the market's reference price in that world's engine
 * (RFQ_HOUSE_SPREAD_CENTS either side) at once when the RFQ is created, through the same quote
 * path as a person (the world's engine holds its collateral), and re-quotes while the RFQ is OPEN
 * whenever the reference has moved or its quote is about to lapse on the world's clock. It never
 * quotes in the live world, and a market without a reference (or not OPEN) gets no house quote.
 */
@Injectable()
export class RfqHouseResponder {
  private readonly log = new Logger('RfqHouse');

  constructor(
    private readonly life: RfqLifecycle,
    private readonly config: ConfigService,
    private readonly submit: SubmitQuoteUseCase,
  ) {}

  /** A new RFQ: quoted on the next turn (after its creation is answered), paper worlds only. */
  onCreated(world: WorldName, rfq: RfqRow): void {
    if (!isPaperWorld(world)) return;
    setImmediate(() => {
      try {
        this.quote(world, rfq.id, rfq.market_id);
      } catch (err) {
        // A world deleted (or unloaded and gone) meanwhile has nothing left to quote.
        this.log.warn(`house quote on ${rfq.id} failed: ${String(err)}`);
      }
    });
  }

  /**
   * Re-quotes the RFQs of a paper world whose house quote is missing, stale or about to lapse on
   * the world's clock.
   */
  refresh(world: WorldName): void {
    const repo = this.life.repos.get(world);
    const now = this.life.now(world);
    for (const rfq of repo.openRfqs()) {
      const current = repo.openQuoteOf(rfq.id, HOUSE_ACCOUNT);
      const target = this.target(world, rfq.market_id);
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
        this.quote(world, rfq.id, rfq.market_id);
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
        // A market that closed or an RFQ that ended meanwhile: nothing to quote.
      }
    }
  }

  private quote(world: WorldName, rfqId: string, marketId: string): void {
    const target = this.target(world, marketId);
    if (target === null) return;
    this.submit.execute(world, HOUSE_ACCOUNT, rfqId, {
      bid: target.bid ?? undefined,
      ask: target.ask ?? undefined,
      expires_in_seconds: HOUSE_QUOTE_SECONDS,
    });
  }

  private target(
    world: WorldName,
    marketId: string,
  ): { bid: number | null; ask: number | null } | null {
    const reference = this.life.engine(world).reference(marketId);
    if (reference === null) return null;
    return houseQuote(reference, this.config.values.rfqHouseSpreadCents);
  }
}
