import { Module } from '@nestjs/common';
import { OrderExportService } from './order-export.service.js';
import { OrdersController } from './orders.controller.js';
import { OrdersService } from './orders.service.js';
import { PlaceOrderUseCase } from './use-cases/place-order/place-order.use-case.js';

@Module({
  controllers: [OrdersController],
  providers: [OrdersService, OrderExportService, PlaceOrderUseCase],
  exports: [OrdersService],
})
export class OrdersModule {}
