import { Global, Module } from '@nestjs/common';
import { MarketResolvedNoticesService } from './market-resolved-notices.service.js';
import { NotificationsController } from './notifications.controller.js';
import { NotificationsRepository } from './notifications.repository.js';
import { NotificationsService } from './notifications.service.js';

/** In-app notifications: any module may notify a user in a world. */
@Global()
@Module({
  controllers: [NotificationsController],
  providers: [NotificationsRepository, NotificationsService, MarketResolvedNoticesService],
  exports: [NotificationsService],
})
export class NotificationsModule {}
