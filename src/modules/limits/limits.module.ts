import { DynamicModule, Global, Module } from '@nestjs/common';
import { LIMIT_STORE, MemoryLimitStore, type LimitStore } from './limit-store.js';
import { LimitsService } from './limits.service.js';
import { UsageController } from './usage.controller.js';

@Global()
@Module({})
export class LimitsModule {
  static forRoot(store?: LimitStore): DynamicModule {
    return {
      module: LimitsModule,
      controllers: [UsageController],
      providers: [
        { provide: LIMIT_STORE, useValue: store ?? new MemoryLimitStore() },
        LimitsService,
      ],
      exports: [LimitsService],
    };
  }
}
