import { Global, Module } from '@nestjs/common';
import { PaperWorldRecords } from './paper-world-records.service.js';
import { WorldDatabases } from './world-databases.service.js';

/** The world rule's home: which world a request is in, each world's database, paper clean-up. */
@Global()
@Module({
  providers: [PaperWorldRecords, WorldDatabases],
  exports: [PaperWorldRecords, WorldDatabases],
})
export class WorldsModule {}
