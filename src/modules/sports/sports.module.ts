import { Module } from '@nestjs/common';
import { SandboxModule } from '../sandbox/sandbox.module.js';
import { SandboxSportsController } from './sandbox-sports.controller.js';
import { SportsController } from './sports.controller.js';
import { SportsService } from './sports.service.js';

/** Sports events of each world, and the paper world's sandbox final. */
@Module({
  imports: [SandboxModule],
  controllers: [SportsController, SandboxSportsController],
  providers: [SportsService],
})
export class SportsModule {}
