import { Injectable } from '@nestjs/common';
import { iso } from '../../../../common/clock/iso.js';
import type { WorldName } from '../../../../common/environment.js';
import { DomainError, validationFailed } from '../../../../common/errors/domain-error.js';
import { IdGenerator } from '../../../../common/ids/id-generator.js';
import { RFQ_ID } from '../../../../common/ids/id-patterns.js';
import { fromEngine } from '../../../trading/engine-errors.js';
import { RfqLifecycle } from '../../rfq-lifecycle.service.js';
import { RfqNotices } from '../../rfq-notices.service.js';
import { QUOTE_EXPIRY, quoteCollateral } from '../../rfq-rules.js';
import type { QuoteRow, RfqRow } from '../../rfq.repository.js';
import { notFound, rfqNotOpen } from '../../rfq.service.js';

/** A quote as submitted: YES cents, at least one side. */
export interface QuoteTerms {
  bid?: number;
  ask?: number;
  expires_in_seconds?: number;
}

/**
 * Submits a binding quote on an OPEN RFQ: the one quote path, for people (after the approval
 * check) and for the paper house responder. The quote's collateral (its larger side, see
 * quoteCollateral) is held by the engine in the same commit that stores the quote; a responder's
 * earlier OPEN quote on the RFQ is REPLACED in that commit too, its hold released (its amount
 * counts as available for the new one). Refused: no side or bid >= ask (400), own RFQ (422
 * SELF_QUOTE), RFQ not OPEN (409 RFQ_NOT_OPEN), collateral short (422 INSUFFICIENT_FUNDS);
 * nothing changes then.
 */
@Injectable()
export class SubmitQuoteUseCase {
  constructor(
    private readonly life: RfqLifecycle,
    private readonly ids: IdGenerator,
    private readonly notices: RfqNotices,
  ) {}

  execute(world: WorldName, responderId: string, rfqId: string, terms: QuoteTerms): QuoteRow {
    const bid = terms.bid ?? null;
    const ask = terms.ask ?? null;
    if (bid === null && ask === null) {
      throw validationFailed([
        { field: 'bid', message: 'bid must be given when ask is not (give a bid, an ask or both)' },
      ]);
    }
    if (bid !== null && ask !== null && bid >= ask) {
      throw validationFailed([{ field: 'ask', message: 'ask must be above bid' }]);
    }
    this.life.expireDue(world);
    const repo = this.life.repos.get(world);
    const rfq = RFQ_ID.test(rfqId) ? repo.rfq(rfqId) : undefined;
    if (rfq === undefined) throw notFound(rfqId);
    if (rfq.user_id === responderId) {
      throw new DomainError('SELF_QUOTE', 'You cannot quote your own RFQ', { rfq_id: rfq.id });
    }
    if (rfq.status !== 'OPEN') throw rfqNotOpen(rfq);
    const rt = this.life.engine(world);
    rt.ensureAccount(responderId);
    const now = this.life.now(world);
    const id = this.ids.next('quo');
    const row: QuoteRow = {
      id,
      rfq_id: rfq.id,
      responder_id: responderId,
      bid,
      ask,
      quantity: rfq.quantity,
      status: 'OPEN',
      hold_id: id,
      hold_cents: quoteCollateral({ bid, ask }, rfq.quantity),
      expires_at: iso(now + (terms.expires_in_seconds ?? QUOTE_EXPIRY.default) * 1000),
      created_at: iso(now),
      updated_at: iso(now),
    };
    const previous = this.hold(world, rfq, row);
    if (previous !== undefined) this.notices.quoteCancelled(world, rfq, previous);
    this.notices.quoteReceived(world, rfq, row, previous !== undefined);
    return row;
  }

  /**
   * Holds the collateral and stores the quote in one commit, replacing the responder's OPEN quote
   * on the RFQ; answers the replaced quote, if any.
   */
  private hold(world: WorldName, rfq: RfqRow, row: QuoteRow): QuoteRow | undefined {
    const repo = this.life.repos.get(world);
    const rt = this.life.engine(world);
    let previous = repo.openQuoteOf(rfq.id, row.responder_id);
    const place = (replaces: QuoteRow | undefined) =>
      rt.holdQuote(
        {
          holdId: row.hold_id,
          accountId: row.responder_id,
          marketId: rfq.market_id,
          amountCents: row.hold_cents,
          replacesHoldId: replaces?.hold_id ?? null,
        },
        () => {
          if (replaces !== undefined) repo.endQuote(replaces.id, 'REPLACED', row.created_at);
          repo.insertQuote(row);
        },
      );
    let held = place(previous);
    if (!held.ok && held.code === 'UNKNOWN_HOLD' && previous !== undefined) {
      // The earlier quote's hold is gone (a sandbox reset dropped it): end that row on its own.
      this.life.endQuote(world, previous, 'REPLACED', false);
      held = place(undefined);
    }
    if (!held.ok) throw fromEngine(held, { marketId: rfq.market_id });
    if (previous !== undefined) previous = { ...previous, status: 'REPLACED' };
    return previous;
  }
}
