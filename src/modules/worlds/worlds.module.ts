import { Global, Module } from '@nestjs/common';
import { PaperWorldRecords } from './paper-world-records.service.js';
import { WorldCatalog } from './world-catalog.js';
import { WorldClocks } from './world-clocks.service.js';
import { WorldDatabases } from './world-databases.service.js';
import { WorldMarkets } from './world-markets.service.js';
import { WorldStorage } from './world-storage.js';

/**
 * The world rule's home: which world a request is in, each world's database and clock, its
 * markets, paper clean-up.
 */
@Global()
@Module({
  providers: [
    PaperWorldRecords,
    WorldCatalog,
    WorldClocks,
    WorldDatabases,
    WorldMarkets,
    WorldStorage,
  ],
  exports: [
    PaperWorldRecords,
    WorldCatalog,
    WorldClocks,
    WorldDatabases,
    WorldMarkets,
    WorldStorage,
  ],
})
export class WorldsModule {}
