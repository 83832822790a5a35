import { Body, Controller, Delete, Get, Param, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Endpoint } from '../../common/api/endpoint.decorator.js';
import type { WorldName } from '../../common/environment.js';
import { Cred } from '../../common/http/credential.decorator.js';
import type { Credential } from '../../common/http/request-context.js';
import { PageQueryDto } from '../../common/pagination/page-query.dto.js';
import { World } from '../worlds/world.decorator.js';
import {
  AcceptQuoteDto,
  AcceptResultDto,
  OpenRfqPageDto,
  QuotePageDto,
  QuoteViewDto,
  SubmitQuoteDto,
} from './dto/rfq.dto.js';
import { NOT_FOUND_RFQ, RFQ_WORLD } from './rfq.controller.js';
import { RfqResponders } from './rfq-responders.js';
import { RfqService } from './rfq.service.js';
import { quoteView } from './rfq-views.js';
import { AcceptQuoteUseCase } from './use-cases/accept-quote/accept-quote.use-case.js';
import { SubmitQuoteUseCase } from './use-cases/submit-quote/submit-quote.use-case.js';

const APPROVAL =
  'Responders need the rfq:respond scope and an account approved as RFQ responder (else 403 RFQ_RESPONDER_NOT_APPROVED), checked on every quote operation.';
const NOT_APPROVED = 'RFQ_RESPONDER_NOT_APPROVED: the account is not an approved RFQ responder';
const NOT_FOUND_QUOTE = 'NOT_FOUND (details.quote_id): no such quote of yours in this world';

@ApiTags('RFQ')
@Controller('rfq')
export class RfqQuotesController {
  constructor(
    private readonly rfqs: RfqService,
    private readonly responders: RfqResponders,
    private readonly submitQuote: SubmitQuoteUseCase,
    private readonly acceptQuote: AcceptQuoteUseCase,
  ) {}

  @Get('open')
  @Endpoint({
    summary: 'OPEN RFQs to quote (responders)',
    description: `${RFQ_WORLD} ${APPROVAL} Newest first; the requester is never named.`,
    auth: 'key',
    scopes: ['rfq:respond'],
    type: OpenRfqPageDto,
    errors: [400, 403],
    codes: { 403: [NOT_APPROVED] },
  })
  open(@Cred() c: Credential, @World() world: WorldName, @Query() q: PageQueryDto): OpenRfqPageDto {
    return this.rfqs.listOpen(world, c, q);
  }

  @Post(':id/quotes')
  @Endpoint({
    summary: 'Quote an RFQ (responders)',
    description: `${RFQ_WORLD} ${APPROVAL} A binding quote in YES cents: bid (you buy YES there), ask (you sell YES there), or both; 1 <= bid < ask <= 99. expires_in_seconds 1..300 (default 30). Your collateral for the larger side (bid x quantity, or (100 - ask) x quantity) is reserved until the quote ends. A new quote replaces your OPEN one on the RFQ (REPLACED, its reservation released).`,
    auth: 'key',
    scopes: ['rfq:respond'],
    status: 201,
    type: QuoteViewDto,
    errors: [400, 403, 404, 409, 422],
    codes: {
      403: [NOT_APPROVED],
      404: ['NOT_FOUND (details.rfq_id): no such RFQ in this world'],
      409: ['RFQ_NOT_OPEN (details.status)'],
      422: [
        'SELF_QUOTE: the RFQ is yours',
        'INSUFFICIENT_FUNDS (details.required_cents, details.available_cents): the collateral cannot be reserved',
        'MARKET_NOT_OPEN',
      ],
    },
  })
  quote(
    @Cred() c: Credential,
    @World() world: WorldName,
    @Param('id') id: string,
    @Body() body: SubmitQuoteDto,
  ): QuoteViewDto {
    this.responders.requireApproved(c.userId);
    return quoteView(this.submitQuote.execute(world, c.userId, id, body), world);
  }

  @Get(':id/quotes')
  @Endpoint({
    summary: 'Quotes on an RFQ',
    description: `${RFQ_WORLD} The requester (with orders:read) sees every OPEN quote; an approved responder (with rfq:respond) only its own quotes, whatever their status. Oldest first. Anyone else: 404.`,
    auth: 'key',
    type: QuotePageDto,
    errors: [400, 403, 404],
    codes: { 403: [NOT_APPROVED, 'INSUFFICIENT_SCOPE'], 404: [NOT_FOUND_RFQ] },
  })
  quotes(
    @Cred() c: Credential,
    @World() world: WorldName,
    @Param('id') id: string,
    @Query() q: PageQueryDto,
  ): QuotePageDto {
    return this.rfqs.quotes(world, c, id, q);
  }

  @Delete('quotes/:id')
  @Endpoint({
    summary: 'Withdraw your quote (responders)',
    description: `${RFQ_WORLD} ${APPROVAL} The quote ends CANCELLED and its reservation is released. Answers the quote.`,
    auth: 'key',
    scopes: ['rfq:respond'],
    status: 200,
    type: QuoteViewDto,
    errors: [403, 404, 409],
    codes: {
      403: [NOT_APPROVED],
      404: [NOT_FOUND_QUOTE],
      409: ['QUOTE_NOT_OPEN (details.status)'],
    },
  })
  withdraw(
    @Cred() c: Credential,
    @World() world: WorldName,
    @Param('id') id: string,
  ): QuoteViewDto {
    return this.rfqs.withdraw(world, c, id);
  }

  @Post('quotes/:id/accept')
  @Endpoint({
    summary: 'Accept a quote on your RFQ',
    description: `${RFQ_WORLD} Trades the RFQ's whole quantity at once, off the book: BUY YES and SELL NO at the ask (SELL NO at 100 - ask), SELL YES and BUY NO at the bid (BUY NO at 100 - bid). Both parties get a FILLED order of type RFQ (rfq_id set) and one trade (source RFQ) prints on trades:<market_id>; positions net and money is conserved as for book trades; the resting book is not touched. Committed before the answer. Idempotency-Key is honoured: a retry replays the first answer. The RFQ's other quotes end CANCELLED.`,
    auth: 'key',
    scopes: ['orders:write'],
    status: 200,
    type: AcceptResultDto,
    errors: [400, 404, 409, 422],
    codes: {
      404: ['NOT_FOUND (details.quote_id): no such quote on an RFQ of yours'],
      409: ['QUOTE_NOT_OPEN (details.status)', 'RFQ_NOT_OPEN (details.status)'],
      422: [
        'QUOTE_SIDE_NOT_OFFERED (details.side): the quote has no bid (or ask) for this action and side',
        'INSUFFICIENT_FUNDS (details.party REQUESTER or RESPONDER, required_cents, available_cents)',
        'MARKET_NOT_OPEN',
      ],
    },
  })
  accept(
    @Cred() c: Credential,
    @World() world: WorldName,
    @Param('id') id: string,
    @Body() body: AcceptQuoteDto,
  ): AcceptResultDto {
    return this.acceptQuote.execute(world, c, id, body);
  }
}
