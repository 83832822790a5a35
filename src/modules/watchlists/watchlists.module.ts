import { Module } from '@nestjs/common';
import { WatchlistsController } from './watchlists.controller.js';
import { WatchlistsService } from './watchlists.service.js';

/** Watchlists: per user and world, stored in the world's database, priced by its engine. */
@Module({
  controllers: [WatchlistsController],
  providers: [WatchlistsService],
})
export class WatchlistsModule {}
