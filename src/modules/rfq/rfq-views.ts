import { environmentOf, type WorldName } from '../../common/environment.js';
import type { OpenRfqDto, QuoteViewDto, RfqDto } from './dto/rfq.dto.js';
import type { QuoteRow, RfqRow } from './rfq.repository.js';

/** The requester's view of an RFQ. */
export function rfqView(r: RfqRow, world: WorldName): RfqDto {
  return {
    id: r.id,
    market_id: r.market_id,
    quantity: r.quantity,
    status: r.status,
    expires_at: r.expires_at,
    accepted_quote_id: r.accepted_quote_id,
    trade_id: r.trade_id,
    created_at: r.created_at,
    environment: environmentOf(world),
  };
}

/** What responders see of an RFQ: never who asked (nor which quote won, nor the trade). */
export function openRfqView(r: RfqRow, world: WorldName): OpenRfqDto {
  return {
    id: r.id,
    market_id: r.market_id,
    quantity: r.quantity,
    status: 'OPEN',
    expires_at: r.expires_at,
    created_at: r.created_at,
    environment: environmentOf(world),
  };
}

/** A quote as both parties see it: never the responder's identity either. */
export function quoteView(q: QuoteRow, world: WorldName): QuoteViewDto {
  return {
    id: q.id,
    rfq_id: q.rfq_id,
    bid: q.bid,
    ask: q.ask,
    quantity: q.quantity,
    status: q.status,
    expires_at: q.expires_at,
    created_at: q.created_at,
    environment: environmentOf(world),
  };
}
