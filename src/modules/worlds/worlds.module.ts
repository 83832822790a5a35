import { Global, Module } from '@nestjs/common';
import { PaperWorldRecords } from './paper-world-records.service.js';
import { WorldCatalog } from './world-catalog.js';
import { WorldClocks } from './world-clocks.service.js';
import { WorldDatabases } from './world-databases.service.js';
import { WorldMarkets } from './world-markets.service.js';
import { WorldStorage } from './world-storage.js';
import { WorldWork } from './world-work.js';

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
    WorldWork,
  ],
  exports: [
    PaperWorldRecords,
    WorldCatalog,
    WorldClocks,
    WorldDatabases,
    WorldMarkets,
    WorldStorage,
    WorldWork,
  ],
})
export class WorldsModule {}
