import {
  Body,
  Controller,
  Injectable,
  Post,
  UseGuards,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ApiProperty, ApiTags } from '@nestjs/swagger';
import { IsInt, Max, Min } from 'class-validator';
import { Clock, AdjustableClock, MAX_CLOCK_OFFSET_MS } from '../../common/clock/clock.js';
import { Endpoint } from '../../common/api/endpoint.decorator.js';
import { DomainError, validationFailed } from '../../common/errors/domain-error.js';
import { ConfigService } from '../../config/config.service.js';
import { isWorldId, type WorldName } from '../../common/environment.js';
import { EngineRegistry } from '../trading/engine-registry.js';
import { World } from '../worlds/world.decorator.js';
import { ServiceClockSync } from './service-clock-sync.js';

export class AdvanceClockDto {
  @ApiProperty({ type: 'integer', minimum: 0, maximum: 31_536_000, example: 300 })
  @IsInt()
  @Min(0)
  @Max(31_536_000)
  advance_seconds: number;
}

export class ClockDto {
  @ApiProperty({ format: 'date-time' })
  now: string;
}

/**
 * A world key may always move its world's clock (CONTRACT.md: "whatever SANDBOX_CLOCK_CONTROL
 * says"); any other caller only with SANDBOX_CLOCK_CONTROL=true (never on production), else 404.
 * Guards run before the validation pipe, so with the control off no body, valid or not, tells a
 * caller outside a world that the service clock can be moved.
 */
@Injectable()
export class ClockControlGuard implements CanActivate {
  constructor(
    private readonly clock: Clock,
    private readonly config: ConfigService,
  ) {}

  canActivate(ctx: ExecutionContext): boolean {
    if (isWorldId(ctx.switchToHttp().getRequest<FastifyRequest>().svc.world)) return true;
    if (!this.config.values.sandboxClockControl || !(this.clock instanceof AdjustableClock)) {
      throw new DomainError('NOT_FOUND', 'No such route');
    }
    return true;
  }
}

@ApiTags('Sandbox')
@Controller('sandbox/clock')
@UseGuards(ClockControlGuard)
export class SandboxClockController {
  constructor(
    private readonly clock: Clock,
    private readonly engines: EngineRegistry,
    private readonly sync: ServiceClockSync,
  ) {}

  @Post()
  @Endpoint({
    summary: "Move the service clock, or a world's clock, forward (test fixture)",
    description:
      "With an ephemeral world's key (POST /sandbox/worlds): moves that world's clock only, whatever SANDBOX_CLOCK_CONTROL says: its per-key and per-route limit windows, quotas, idempotency expiry, order expiry, market close and price feed (one step per feed interval passed, at most 100) follow it; the service clock, the paper world and other worlds do not move. Without a world key: only when the server runs with SANDBOX_CLOCK_CONTROL=true (never on production), otherwise 404 NOT_FOUND; it needs no credential and moves the service clock every time rule reads (MFA, signature skew, key expiry, limit windows, quotas, webhook windows, sunsets). A clock may run at most ten years ahead (400 VALIDATION_FAILED naming advance_seconds).",
    auth: 'optional',
    lifecycle: { state: 'BETA' },
    type: ClockDto,
    errors: [400, 404],
  })
  advance(@World() world: WorldName, @Body() body: AdvanceClockDto): ClockDto {
    // With a world key: that world's clock only (its feed steps with it); the service clock stays.
    if (isWorldId(world)) {
      return {
        now: new Date(this.engines.advanceWorld(world, body.advance_seconds * 1000)).toISOString(),
      };
    }
    // Outside a world: the guard has checked the control is on; the test narrows the type.
    if (!(this.clock instanceof AdjustableClock)) {
      throw new DomainError('NOT_FOUND', 'No such route');
    }
    const ms = body.advance_seconds * 1000;
    if (this.clock.offset + ms > MAX_CLOCK_OFFSET_MS) {
      throw validationFailed([
        {
          field: 'advance_seconds',
          message:
            'advance_seconds must keep the clock at most ten years ahead of the wall clock in all',
        },
      ]);
    }
    this.clock.advance(ms);
    // Cluster mode: every instance's time rules follow (this one is the world's writer).
    this.sync.advanced();
    return { now: this.clock.nowDate().toISOString() };
  }
}
