import { Module } from '@nestjs/common';
import { WebhooksModule } from '../webhooks/webhooks.module.js';
import { RfqController } from './rfq.controller.js';
import { RfqHouseResponder } from './rfq-house-responder.service.js';
import { RfqLifecycle } from './rfq-lifecycle.service.js';
import { RfqNotices } from './rfq-notices.service.js';
import { RfqQuotesController } from './rfq-quotes.controller.js';
import { RfqResponders } from './rfq-responders.js';
import { RfqTimers } from './rfq-timers.service.js';
import { RfqService } from './rfq.service.js';
import { AcceptQuoteUseCase } from './use-cases/accept-quote/accept-quote.use-case.js';
import { SubmitQuoteUseCase } from './use-cases/submit-quote/submit-quote.use-case.js';

/**
 * Requests for quote: stored per world beside the engine's orders, quoted by approved responders
 * (and the paper house), accepted through one atomic engine command. Exports its notices for the
 * realtime hub's `rfq` channel.
 */
@Module({
  imports: [WebhooksModule],
  // The quotes controller first: its static /rfq/open must not be read as /rfq/{id}.
  controllers: [RfqQuotesController, RfqController],
  providers: [
    RfqResponders,
    RfqNotices,
    RfqLifecycle,
    SubmitQuoteUseCase,
    AcceptQuoteUseCase,
    RfqHouseResponder,
    RfqService,
    RfqTimers,
  ],
  exports: [RfqNotices],
})
export class RfqModule {}
