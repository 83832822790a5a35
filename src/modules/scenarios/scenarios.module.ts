import { Module } from '@nestjs/common';
import { RealtimeModule } from '../realtime/realtime.module.js';
import { ScenarioGate } from './scenario-gate.js';
import { ScenariosController } from './scenarios.controller.js';
import { ScenariosService } from './scenarios.service.js';

/** Sandbox scenarios: failures injected into a user's paper-world answers (see ScenarioGate). */
@Module({
  imports: [RealtimeModule],
  controllers: [ScenariosController],
  providers: [ScenariosService, ScenarioGate],
  exports: [ScenarioGate],
})
export class ScenariosModule {}
