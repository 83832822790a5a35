import { Module } from '@nestjs/common';
import { OrderExportService } from './order-export.service.js';
import { OrdersController } from './orders.controller.js';
import { OrdersService } from './orders.service.js';

@Module({
  controllers: [OrdersController],
  providers: [OrdersService, OrderExportService],
  exports: [OrdersService],
})
export class OrdersModule {}
