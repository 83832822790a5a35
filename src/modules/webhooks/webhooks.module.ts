import { Module } from '@nestjs/common';
import { WebhookOutbox } from './webhook-outbox.service.js';
import { WebhookWorker } from './webhook-worker.service.js';
import { WebhooksController } from './webhooks.controller.js';
import { WebhooksCore } from './webhooks.core.js';
import { WebhooksService } from './webhooks.service.js';

@Module({
  controllers: [WebhooksController],
  providers: [WebhooksCore, WebhooksService, WebhookOutbox, WebhookWorker],
  exports: [WebhooksCore, WebhookOutbox],
})
export class WebhooksModule {}
