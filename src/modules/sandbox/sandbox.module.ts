import { Module } from '@nestjs/common';
import { SandboxControlsController } from './sandbox-controls.controller.js';
import { SandboxControlsService } from './sandbox-controls.service.js';

/** Paper-world controls for test keys: reset, fund, reference price, resolve. */
@Module({
  controllers: [SandboxControlsController],
  providers: [SandboxControlsService],
  exports: [SandboxControlsService],
})
export class SandboxModule {}
