import { Injectable, type OnModuleInit } from '@nestjs/common';
import { iso } from '../../common/clock/iso.js';
import { isPaperWorld, type WorldName } from '../../common/environment.js';
import { DomainError } from '../../common/errors/domain-error.js';
import type { Credential } from '../../common/http/request-context.js';
import { IdGenerator } from '../../common/ids/id-generator.js';
import { QUOTE_ID, RFQ_ID } from '../../common/ids/id-patterns.js';
import { paginate, type Page } from '../../common/pagination/paginate.js';
import type { PageQueryDto } from '../../common/pagination/page-query.dto.js';
import { PaperWorldRecords } from '../worlds/paper-world-records.service.js';
import { WorldMarkets } from '../worlds/world-markets.service.js';
import type {
  CreateRfqDto,
  ListRfqQueryDto,
  OpenRfqDto,
  QuoteViewDto,
  RfqDto,
} from './dto/rfq.dto.js';
import { RfqHouseResponder } from './rfq-house-responder.service.js';
import { RfqLifecycle } from './rfq-lifecycle.service.js';
import { RfqNotices } from './rfq-notices.service.js';
import { RfqResponders } from './rfq-responders.js';
import { MAX_OPEN_RFQS, RFQ_EXPIRY } from './rfq-rules.js';
import { openRfqView, quoteView, rfqView } from './rfq-views.js';
import type { QuoteRow, RfqRepository, RfqRow } from './rfq.repository.js';

/**
 * The requester's RFQs (create, list, read, cancel) and the reads of both parties, in the
 * request's world (live, the shared paper world or an ephemeral world: each its own records).
 * Every read and write first ends what the world's clock has expired, so nothing past its time
 * shows OPEN.
 */
@Injectable()
export class RfqService implements OnModuleInit {
  constructor(
    private readonly life: RfqLifecycle,
    private readonly markets: WorldMarkets,
    private readonly ids: IdGenerator,
    private readonly notices: RfqNotices,
    private readonly responders: RfqResponders,
    private readonly house: RfqHouseResponder,
    private readonly paperRecords: PaperWorldRecords,
  ) {}

  /**
   * A sandbox reset cancels the user's RFQs of that paper world (the shared one, or the ephemeral
   * world of the key) with every quote on them, releasing the responders' holds, and the quotes
   * the user made there as a responder (its own holds, which the account reset already dropped).
   * Answers how many RFQs and quotes it ended. A deleted world's RFQs go with its file.
   */
  onModuleInit(): void {
    // The reset's transaction reads the open ones with its COMMIT (no round trip of its own);
    // ending each (a hold released, a commit of its own) runs after it, only when there are any.
    this.paperRecords.registerStaged('rfqs', (userId, world) => {
      if (!isPaperWorld(world)) return () => 0;
      const open = this.repo(world).stageOpenRfqsOf(userId);
      return () => {
        let n = 0;
        for (const r of open()) if (this.life.endRfq(world, r, 'CANCELLED')) n++;
        return n;
      };
    });
    this.paperRecords.registerStaged('rfq_quotes', (userId, world) => {
      if (!isPaperWorld(world)) return () => 0;
      const open = this.repo(world).stageOpenQuotesOfResponder(userId);
      return () => {
        let n = 0;
        for (const q of open()) if (this.life.endQuote(world, q, 'CANCELLED')) n++;
        return n;
      };
    });
  }

  create(world: WorldName, c: Credential, body: CreateRfqDto): RfqDto {
    const market = this.markets.require(world, body.market_id);
    if (market.status !== 'OPEN') {
      throw new DomainError('MARKET_NOT_OPEN', 'The market is not open for trading', {
        market_id: body.market_id,
      });
    }
    const repo = this.repo(world);
    this.life.expireDue(world);
    const now = this.life.now(world);
    const row: RfqRow = {
      id: this.ids.next('rfq'),
      user_id: c.userId,
      market_id: body.market_id,
      quantity: body.quantity,
      status: 'OPEN',
      expires_at: iso(now + (body.expires_in_seconds ?? RFQ_EXPIRY.default) * 1000),
      accepted_quote_id: null,
      trade_id: null,
      created_at: iso(now),
      updated_at: iso(now),
    };
    repo.transaction(() => {
      if (repo.openCount(c.userId) >= MAX_OPEN_RFQS) {
        throw new DomainError(
          'RFQ_LIMIT_REACHED',
          `You have ${MAX_OPEN_RFQS} OPEN RFQs in this world, the most allowed: cancel one or let it expire`,
          { limit: MAX_OPEN_RFQS },
        );
      }
      repo.insertRfq(row);
    });
    this.notices.rfqCreated(world, row);
    this.house.onCreated(world, row);
    return rfqView(row, world);
  }

  list(world: WorldName, c: Credential, q: ListRfqQueryDto): Page<RfqDto> {
    this.life.expireDue(world);
    const repo = this.repo(world);
    return paginate({
      list: `rfqs:${world}`,
      keys: ['id'],
      query: q,
      fetch: (after, take) => repo.page(c.userId, q.status, after?.[0] ?? '', take),
      keyOf: (r) => [r.id],
      map: (r) => rfqView(r, world),
    });
  }

  get(world: WorldName, c: Credential, id: string): RfqDto {
    this.life.expireDue(world);
    return rfqView(this.owned(world, c.userId, id), world);
  }

  /** Cancels an OPEN RFQ and its OPEN quotes; one no longer OPEN is 409 RFQ_NOT_OPEN. */
  cancel(world: WorldName, c: Credential, id: string): RfqDto {
    this.life.expireDue(world);
    const rfq = this.owned(world, c.userId, id);
    if (!this.life.endRfq(world, rfq, 'CANCELLED')) throw rfqNotOpen(this.repo(world).rfq(id)!);
    return rfqView(this.repo(world).rfq(id)!, world);
  }

  /** The OPEN RFQs of the world, newest first, as responders see them (no requester). */
  listOpen(world: WorldName, c: Credential, q: PageQueryDto): Page<OpenRfqDto> {
    this.responders.requireApproved(c.userId);
    this.life.expireDue(world);
    const repo = this.repo(world);
    return paginate({
      list: `rfq-open:${world}`,
      keys: ['id'],
      query: q,
      fetch: (after, take) => repo.openPage(after?.[0] ?? '', take),
      keyOf: (r) => [r.id],
      map: (r) => openRfqView(r, world),
    });
  }

  /**
   * The quotes of an RFQ: its requester sees every OPEN quote; an approved responder (with
   * rfq:respond) only its own, whatever their status. Anyone else: 404, as for an unknown id.
   */
  quotes(world: WorldName, c: Credential, id: string, q: PageQueryDto): Page<QuoteViewDto> {
    this.life.expireDue(world);
    const repo = this.repo(world);
    const rfq = RFQ_ID.test(id) ? repo.rfq(id) : undefined;
    if (rfq === undefined) throw notFound(id);
    if (rfq.user_id === c.userId) {
      requireScope(c, 'orders:read');
      return paginate({
        list: `rfq-quotes:${world}:${id}`,
        keys: ['id'],
        query: q,
        fetch: (after, take) => repo.openQuotesPage(id, after?.[0] ?? '', take),
        keyOf: (r) => [r.id],
        map: (r) => quoteView(r, world),
      });
    }
    if (!c.scopes.includes('rfq:respond')) throw notFound(id);
    this.responders.requireApproved(c.userId);
    return paginate({
      list: `rfq-quotes:${world}:${id}`,
      keys: ['id'],
      query: q,
      fetch: (after, take) => repo.responderQuotesPage(id, c.userId, after?.[0] ?? '', take),
      keyOf: (r) => [r.id],
      map: (r) => quoteView(r, world),
    });
  }

  /** A responder withdraws its OPEN quote (CANCELLED, hold released). */
  withdraw(world: WorldName, c: Credential, quoteId: string): QuoteViewDto {
    this.responders.requireApproved(c.userId);
    this.life.expireDue(world);
    const repo = this.repo(world);
    const quote = QUOTE_ID.test(quoteId) ? repo.quote(quoteId) : undefined;
    if (quote === undefined || quote.responder_id !== c.userId) {
      throw new DomainError('NOT_FOUND', `No quote ${quoteId} of yours`, { quote_id: quoteId });
    }
    if (!this.life.endQuote(world, quote, 'CANCELLED')) throw quoteNotOpen(repo.quote(quoteId)!);
    return quoteView(repo.quote(quoteId)!, world);
  }

  private owned(world: WorldName, userId: string, id: string): RfqRow {
    const rfq = RFQ_ID.test(id) ? this.repo(world).rfq(id) : undefined;
    if (rfq === undefined || rfq.user_id !== userId) throw notFound(id);
    return rfq;
  }

  private repo(world: WorldName): RfqRepository {
    return this.life.repos.get(world);
  }
}

export function notFound(id: string): DomainError {
  return new DomainError('NOT_FOUND', `No RFQ ${id}`, { rfq_id: id });
}

export function rfqNotOpen(rfq: RfqRow): DomainError {
  return new DomainError('RFQ_NOT_OPEN', `The RFQ is ${rfq.status}, no longer OPEN`, {
    rfq_id: rfq.id,
    status: rfq.status,
  });
}

export function quoteNotOpen(q: QuoteRow): DomainError {
  return new DomainError('QUOTE_NOT_OPEN', `The quote is ${q.status}, no longer OPEN`, {
    quote_id: q.id,
    status: q.status,
  });
}

function requireScope(c: Credential, scope: 'orders:read'): void {
  if (!c.scopes.includes(scope)) {
    throw new DomainError('INSUFFICIENT_SCOPE', `This operation needs the scope ${scope}`, {
      required_scopes: [scope],
      missing_scopes: [scope],
    });
  }
}
