import { Global, Module } from '@nestjs/common';
import { PaperWorldRecords } from './paper-world-records.service.js';
import { WorldCatalog } from './world-catalog.js';
import { WorldDatabases } from './world-databases.service.js';
import { WorldMarkets } from './world-markets.service.js';

/** The world rule's home: which world a request is in, each world's database, its markets, paper clean-up. */
@Global()
@Module({
  providers: [PaperWorldRecords, WorldCatalog, WorldDatabases, WorldMarkets],
  exports: [PaperWorldRecords, WorldCatalog, WorldDatabases, WorldMarkets],
})
export class WorldsModule {}
