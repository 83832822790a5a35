import { Module } from '@nestjs/common';
import { IndicesController } from './indices.controller.js';
import { IndicesService } from './indices.service.js';

/** GET /indices, GET /indices/{slug}/history and their deprecated /data-exports predecessors. */
@Module({
  controllers: [IndicesController],
  providers: [IndicesService],
})
export class IndicesModule {}
