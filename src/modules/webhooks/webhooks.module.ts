import { Module } from '@nestjs/common';
import { WebhookOutbox } from './webhook-outbox.service.js';
import { WebhookWorkbenchController } from './webhook-workbench.controller.js';
import { WebhookWorkbenchService } from './webhook-workbench.service.js';
import { WebhookWorker } from './webhook-worker.service.js';
import { WebhooksController } from './webhooks.controller.js';
import { WebhooksCore } from './webhooks.core.js';
import { WebhooksService } from './webhooks.service.js';

@Module({
  controllers: [WebhooksController, WebhookWorkbenchController],
  providers: [WebhooksCore, WebhooksService, WebhookWorkbenchService, WebhookOutbox, WebhookWorker],
  exports: [WebhooksCore, WebhookOutbox],
})
export class WebhooksModule {}
