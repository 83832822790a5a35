import { Global, Module } from '@nestjs/common';
import { EngineRegistry } from './engine-registry.js';
import { EventBus, InProcessEventBus } from './event-bus.js';

/** The engines (live, paper) and the bus their committed events leave on. */
@Global()
@Module({
  providers: [EngineRegistry, { provide: EventBus, useValue: new InProcessEventBus() }],
  exports: [EngineRegistry, EventBus],
})
export class TradingModule {}
