import { Module } from '@nestjs/common';
import { NotificationsController } from '../notifications/notifications.controller.js';
import { NotificationsService } from '../notifications/notifications.service.js';
import { WebhookOutbox } from './webhook-outbox.service.js';
import { WebhookWorker } from './webhook-worker.service.js';
import { WebhooksController } from './webhooks.controller.js';
import { WebhooksCore } from './webhooks.core.js';
import { WebhooksService } from './webhooks.service.js';

@Module({
  controllers: [WebhooksController, NotificationsController],
  providers: [WebhooksCore, WebhooksService, WebhookOutbox, WebhookWorker, NotificationsService],
  exports: [WebhooksCore],
})
export class WebhooksModule {}
