import { DynamicModule, Global, Module } from '@nestjs/common';
import { Clock } from './common/clock/clock.js';
import { RouteRegistry } from './common/http/route-registry.js';
import { IdGenerator } from './common/ids/id-generator.js';
import { ConfigModule } from './config/config.module.js';
import type { ConfigService } from './config/config.service.js';
import { DatabaseModule } from './database/database.module.js';
import { SeedService } from './database/seed.service.js';
import { EphemeralWorldsModule } from './modules/worlds/ephemeral-worlds.module.js';
import { AccessModule } from './modules/access/access.module.js';
import { HealthController } from './modules/health/health.controller.js';
import type { LimitStore } from './modules/limits/limit-store.js';
import { LimitsModule } from './modules/limits/limits.module.js';
import { RedisModule } from './modules/redis/redis.module.js';
import { WebhooksModule } from './modules/webhooks/webhooks.module.js';
import { RealtimeModule } from './modules/realtime/realtime.module.js';
import { OrdersModule } from './modules/orders/orders.module.js';
import { ClusterModule } from './modules/cluster/cluster.module.js';
import { TradingModule } from './modules/trading/trading.module.js';
import { MailModule } from './modules/mail/mail.module.js';
import { MarketsModule } from './modules/markets/markets.module.js';
import { MarketCreationModule } from './modules/market-creation/market-creation.module.js';
import { MetaController } from './modules/meta/meta.controller.js';
import { OpenApiService } from './modules/meta/openapi.service.js';
import { UsersModule } from './modules/users/users.module.js';
import { WalletModule } from './modules/wallet/wallet.module.js';
import { PositionsModule } from './modules/positions/positions.module.js';
import { IndicesModule } from './modules/indices/indices.module.js';
import { CryptoModule } from './modules/crypto/crypto.module.js';
import { RankModule } from './modules/rank/rank.module.js';
import { SandboxModule } from './modules/sandbox/sandbox.module.js';
import { SandboxClockController } from './modules/sandbox/sandbox-clock.controller.js';
import { ServiceClockSync } from './modules/sandbox/service-clock-sync.js';
import { NotificationsModule } from './modules/notifications/notifications.module.js';
import { WorldsModule } from './modules/worlds/worlds.module.js';
import { WatchlistsModule } from './modules/watchlists/watchlists.module.js';
import { CommentsModule } from './modules/comments/comments.module.js';
import { SportsModule } from './modules/sports/sports.module.js';
import { RfqModule } from './modules/rfq/rfq.module.js';
import { ScenariosModule } from './modules/scenarios/scenarios.module.js';
import { DataExportsModule } from './modules/data-exports/data-exports.module.js';

export interface AppDeps {
  config: ConfigService;
  clock: Clock;
  routes: RouteRegistry;
  /** Limit store; the in-process one by default. */
  limitStore?: LimitStore;
}

/** Process-wide collaborators: the clock, the id generator, the route registry. */
@Global()
@Module({})
class CoreModule {
  static forRoot(deps: AppDeps): DynamicModule {
    const ids = new IdGenerator(() => deps.clock.now());
    return {
      module: CoreModule,
      providers: [
        { provide: Clock, useValue: deps.clock },
        { provide: IdGenerator, useValue: ids },
        { provide: RouteRegistry, useValue: deps.routes },
        OpenApiService,
      ],
      exports: [Clock, IdGenerator, RouteRegistry, OpenApiService],
    };
  }
}

@Module({})
export class AppModule {
  static forRoot(deps: AppDeps): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(deps.config),
        CoreModule.forRoot(deps),
        DatabaseModule,
        RedisModule,
        WorldsModule,
        UsersModule,
        NotificationsModule,
        MailModule,
        AccessModule,
        LimitsModule.forRoot(deps.limitStore),
        TradingModule,
        ClusterModule,
        MarketsModule,
        MarketCreationModule,
        OrdersModule,
        WalletModule,
        PositionsModule,
        IndicesModule,
        CryptoModule,
        RankModule,
        CommentsModule,
        SandboxModule,
        WatchlistsModule,
        SportsModule,
        RfqModule,
        DataExportsModule,
        RealtimeModule,
        ScenariosModule,
        WebhooksModule,
        EphemeralWorldsModule,
      ],
      // The clock control is a test fixture. A world key moves its world's clock whatever
      // SANDBOX_CLOCK_CONTROL says, so the route is always there; outside a world it answers 404
      // unless the control is on (its guard).
      controllers: [MetaController, HealthController, SandboxClockController],
      providers: [SeedService, ServiceClockSync],
    };
  }
}
