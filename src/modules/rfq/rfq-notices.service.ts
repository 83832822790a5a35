import { Injectable, Logger } from '@nestjs/common';
import { Subject } from 'rxjs';
import type { WorldName } from '../../common/environment.js';
import { HOUSE_ACCOUNT } from '../trading/engine-runtime.js';
import { NotificationsService } from '../notifications/notifications.service.js';
import { WebhookOutbox } from '../webhooks/webhook-outbox.service.js';
import { WorldClocks } from '../worlds/world-clocks.service.js';
import type { RfqTradeDto } from './dto/rfq.dto.js';
import { RfqResponders } from './rfq-responders.js';
import { openRfqView, quoteView, rfqView } from './rfq-views.js';
import type { QuoteRow, RfqRow } from './rfq.repository.js';

/** The event names of the private realtime channel `rfq`. */
export type RfqChannelEvent =
  | 'rfq.created'
  | 'rfq.closed'
  | 'rfq.expired'
  | 'quote.received'
  | 'quote.cancelled'
  | 'quote.accepted';

/**
 * One message of the `rfq` channel, for these users' connections of that world (an ephemeral
 * world's messages name it, `world_id`).
 */
export interface RfqChannelMessage {
  environment: WorldName;
  userIds: string[];
  event: RfqChannelEvent;
  /** Epoch ms the message is stamped with. */
  at: number;
  data: Record<string, unknown>;
}

/**
 * Tells the parties what happened to an RFQ, after it is committed: the realtime channel `rfq`
 * ({@link messages}, routed by the realtime hub), the webhooks rfq.quote_received,
 * rfq.quote_accepted and rfq.expired, and the notifications RFQ_QUOTE_RECEIVED and
 * RFQ_QUOTE_ACCEPTED. What reaches a responder never names the requester; the house responder
 * (an engine account, not a user) is told nothing. Everything goes to the RFQ's world only: its
 * realtime connections, its webhook endpoints (events of an ephemeral world carry `world_id`)
 * and its notifications. A failure here is logged, never undoes the committed change it tells of.
 */
@Injectable()
export class RfqNotices {
  readonly messages = new Subject<RfqChannelMessage>();
  private readonly log = new Logger('Rfq');

  constructor(
    private readonly responders: RfqResponders,
    private readonly notifications: NotificationsService,
    private readonly webhooks: WebhookOutbox,
    private readonly clocks: WorldClocks,
  ) {}

  /** Approved responders of the world hear of a new RFQ (anonymous). */
  rfqCreated(env: WorldName, rfq: RfqRow): void {
    this.safely(() =>
      this.send(env, this.respondersBut(rfq.user_id), 'rfq.created', {
        rfq: openRfqView(rfq, env),
      }),
    );
  }

  /** An RFQ filled or cancelled: responders stop quoting it. */
  rfqClosed(env: WorldName, rfq: RfqRow): void {
    this.safely(() =>
      this.send(env, this.respondersBut(rfq.user_id), 'rfq.closed', {
        rfq_id: rfq.id,
        market_id: rfq.market_id,
        status: rfq.status,
      }),
    );
  }

  /** The requester's RFQ expired (webhook rfq.expired); responders hear it closed. */
  rfqExpired(env: WorldName, rfq: RfqRow): void {
    this.safely(() => {
      const view = rfqView(rfq, env);
      this.send(env, [rfq.user_id], 'rfq.expired', { rfq: view });
      this.webhooks.publishUserEvent(env, rfq.user_id, 'rfq.expired', { rfq: view });
    });
    this.rfqClosed(env, rfq);
  }

  /**
   * A quote arrived on the requester's RFQ. A replacement (the same responder re-quoting, as the
   * house does whenever the reference moves) is told on the channel and by webhook, which carry
   * the new quote id, but adds no in-app notification: the inbox would fill with every re-quote.
   */
  quoteReceived(env: WorldName, rfq: RfqRow, quote: QuoteRow, replacement = false): void {
    this.safely(() => {
      const data = { rfq_id: rfq.id, market_id: rfq.market_id, quote: quoteView(quote, env) };
      this.send(env, [rfq.user_id], 'quote.received', data);
      this.webhooks.publishUserEvent(env, rfq.user_id, 'rfq.quote_received', data);
      if (replacement) return;
      this.notifications.notify({
        userId: rfq.user_id,
        environment: env,
        type: 'RFQ_QUOTE_RECEIVED',
        title: 'Quote received',
        body: `A quote on your RFQ for ${rfq.quantity} contracts: ${sides(quote)}`,
        data,
      });
    });
  }

  /** A quote on the requester's RFQ ended unaccepted (withdrawn, replaced, expired, cancelled). */
  quoteCancelled(env: WorldName, rfq: RfqRow, quote: QuoteRow): void {
    this.safely(() =>
      this.send(env, [rfq.user_id], 'quote.cancelled', {
        rfq_id: rfq.id,
        quote_id: quote.id,
        status: quote.status,
      }),
    );
  }

  /** Both parties: the quote traded. The responder's copy does not name the requester. */
  quoteAccepted(env: WorldName, rfq: RfqRow, quote: QuoteRow, trade: RfqTradeDto): void {
    this.safely(() => {
      const requesterData = { rfq: rfqView(rfq, env), quote: quoteView(quote, env), trade };
      const responderData = {
        rfq_id: rfq.id,
        market_id: rfq.market_id,
        quote: quoteView(quote, env),
        trade,
      };
      this.send(env, [rfq.user_id], 'quote.accepted', requesterData);
      this.webhooks.publishUserEvent(env, rfq.user_id, 'rfq.quote_accepted', requesterData);
      const responderId = quote.responder_id;
      if (responderId === HOUSE_ACCOUNT) return;
      this.send(env, [responderId], 'quote.accepted', responderData);
      this.webhooks.publishUserEvent(env, responderId, 'rfq.quote_accepted', responderData);
      this.notifications.notify({
        userId: responderId,
        environment: env,
        type: 'RFQ_QUOTE_ACCEPTED',
        title: 'Quote accepted',
        body: `Your quote traded ${trade.quantity} contracts at ${trade.price} (YES cents)`,
        data: responderData,
      });
    });
    this.rfqClosed(env, rfq);
  }

  private respondersBut(requesterId: string): string[] {
    return this.responders.approvedIds().filter((id) => id !== requesterId);
  }

  private send(
    env: WorldName,
    userIds: string[],
    event: RfqChannelEvent,
    data: Record<string, unknown>,
  ): void {
    const ids = userIds.filter((id) => id !== HOUSE_ACCOUNT);
    if (ids.length === 0) return;
    this.messages.next({
      environment: env,
      userIds: ids,
      event,
      at: this.clocks.for(env).now(),
      data,
    });
  }

  private safely(tell: () => void): void {
    try {
      tell();
    } catch (err) {
      this.log.error(
        `telling of an RFQ change failed: ${err instanceof Error ? err.stack : String(err)}`,
      );
    }
  }
}

function sides(q: QuoteRow): string {
  return [q.bid === null ? null : `bid ${q.bid}`, q.ask === null ? null : `ask ${q.ask}`]
    .filter((s) => s !== null)
    .join(', ');
}
