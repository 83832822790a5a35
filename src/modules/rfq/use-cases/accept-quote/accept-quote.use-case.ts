import { Injectable } from '@nestjs/common';
import type { Failure, TradeEvent } from '../../../../engine/index.js';
import { iso } from '../../../../common/clock/iso.js';
import { environmentOf, type WorldName } from '../../../../common/environment.js';
import { DomainError } from '../../../../common/errors/domain-error.js';
import type { Credential } from '../../../../common/http/request-context.js';
import { IdGenerator } from '../../../../common/ids/id-generator.js';
import { QUOTE_ID } from '../../../../common/ids/id-patterns.js';
import { fromEngine } from '../../../trading/engine-errors.js';
import { toDto } from '../../../orders/order-dto.mapper.js';
import { EngineRegistry } from '../../../trading/engine-registry.js';
import type { AcceptQuoteDto, AcceptResultDto, RfqTradeDto } from '../../dto/rfq.dto.js';
import { RfqLifecycle } from '../../rfq-lifecycle.service.js';
import { RfqNotices } from '../../rfq-notices.service.js';
import { acceptPrice } from '../../rfq-rules.js';
import { quoteView, rfqView } from '../../rfq-views.js';
import type { RfqRow } from '../../rfq.repository.js';
import { quoteNotOpen, rfqNotOpen } from '../../rfq.service.js';

/**
 * Accepts a quote: the requester trades the RFQ's whole quantity against the responder at the
 * quote's price, off the book, in one engine command (two FILLED orders of type RFQ, one trade
 * of source RFQ, the quote's hold released) whose commit also marks the RFQ FILLED and the quote
 * ACCEPTED. The checks (RFQ and quote OPEN and unexpired, side offered) and the command run in
 * one synchronous stretch with no await between them, and the commit's updates are conditional
 * on the rows still being OPEN: of two accepts on one RFQ, or one accept racing an expiry,
 * exactly one trades. The other quotes of the RFQ end CANCELLED afterwards, their holds
 * released.
 */
@Injectable()
export class AcceptQuoteUseCase {
  constructor(
    private readonly life: RfqLifecycle,
    private readonly engines: EngineRegistry,
    private readonly notices: RfqNotices,
    private readonly ids: IdGenerator,
  ) {}

  execute(world: WorldName, c: Credential, quoteId: string, body: AcceptQuoteDto): AcceptResultDto {
    this.life.expireDue(world);
    const repo = this.life.repos.get(world);
    const quote = QUOTE_ID.test(quoteId) ? repo.quote(quoteId) : undefined;
    const rfq = quote === undefined ? undefined : repo.rfq(quote.rfq_id);
    if (quote === undefined || rfq === undefined || rfq.user_id !== c.userId) {
      throw new DomainError('NOT_FOUND', `No quote ${quoteId} on an RFQ of yours`, {
        quote_id: quoteId,
      });
    }
    if (rfq.status !== 'OPEN') throw rfqNotOpen(rfq);
    if (quote.status !== 'OPEN') throw quoteNotOpen(quote);
    const price = acceptPrice(quote, body.action, body.side);
    const rt = this.engines.get(world);
    rt.ensureAccount(c.userId);
    const now = this.life.nowIso(world);
    // Chosen here so the commit names the trade on the RFQ row in the same transaction.
    const tradeId = this.ids.next('fil');
    const crossed = rt.crossQuote(
      {
        marketId: rfq.market_id,
        quantity: rfq.quantity,
        taker: {
          accountId: c.userId,
          action: body.action,
          side: body.side,
          price: price.ownPrice,
          tag: c.keyId,
        },
        maker: { accountId: quote.responder_id, tag: null },
        rfqId: rfq.id,
        releaseHoldId: quote.hold_id,
        tradeId,
      },
      () => {
        // The last guard: the checks above ran in this same synchronous stretch.
        const won = repo.fillRfq(rfq.id, quote.id, tradeId, now) && repo.acceptQuote(quote.id, now);
        if (!won) throw new Error(`RFQ ${rfq.id} or quote ${quote.id} left OPEN during its accept`);
      },
      c.idempotency,
    );
    if (!crossed.ok) throw refusal(crossed, rfq);
    const { takerOrder, trade } = crossed;
    for (const other of repo.openQuotesOf(rfq.id))
      this.life.endQuote(world, other, 'CANCELLED', false);
    const filled = repo.rfq(rfq.id)!;
    const accepted = repo.quote(quote.id)!;
    const tradeDto = tradeView(trade, rfq.market_id, body);
    this.notices.quoteAccepted(world, filled, accepted, tradeDto);
    return {
      rfq: rfqView(filled, world),
      quote: quoteView(accepted, world),
      order: toDto(takerOrder, environmentOf(world), [
        {
          id: trade.id,
          price: price.ownPrice,
          yes_price: trade.price,
          quantity: trade.quantity,
          liquidity: 'TAKER',
          created_at: iso(trade.timestamp),
        },
      ]),
      trade: tradeDto,
    };
  }
}

/** The engine's refusal as the API answers it (nothing changed). */
function refusal(f: Failure, rfq: RfqRow): DomainError {
  if (f.code === 'UNKNOWN_HOLD') {
    // The responder's hold is gone (its paper account was reset): the quote no longer binds.
    return new DomainError('QUOTE_NOT_OPEN', 'The quote is no longer backed by its responder', {
      rfq_id: rfq.id,
    });
  }
  const err = fromEngine(f, { marketId: rfq.market_id });
  if (f.code === 'INSUFFICIENT_FUNDS' && f.party !== undefined) {
    return new DomainError(err.code, err.message, {
      ...err.details,
      party: f.party === 'TAKER' ? 'REQUESTER' : 'RESPONDER',
    });
  }
  return err;
}

function tradeView(t: TradeEvent, marketId: string, body: AcceptQuoteDto): RfqTradeDto {
  const buysYes = (body.action === 'BUY') === (body.side === 'YES');
  return {
    id: t.id,
    market_id: marketId,
    price: t.price,
    no_price: 100 - t.price,
    quantity: t.quantity,
    taker_side: buysYes ? 'YES' : 'NO',
    source: 'RFQ',
    created_at: iso(t.timestamp),
  };
}
