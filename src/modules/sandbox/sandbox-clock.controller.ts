import { Body, Controller, Injectable, Post, UseGuards, type CanActivate } from '@nestjs/common';
import { ApiProperty, ApiTags } from '@nestjs/swagger';
import { IsInt, Max, Min } from 'class-validator';
import { Clock, AdjustableClock, MAX_CLOCK_OFFSET_MS } from '../../common/clock/clock.js';
import { Endpoint } from '../../common/api/endpoint.decorator.js';
import { DomainError, validationFailed } from '../../common/errors/domain-error.js';
import { ConfigService } from '../../config/config.service.js';
import { isWorldId, type WorldName } from '../../common/environment.js';
import { EngineRegistry } from '../trading/engine-registry.js';
import { World } from '../worlds/world.decorator.js';

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
 * The route exists only with SANDBOX_CLOCK_CONTROL=true. Guards run before the validation pipe, so
 * with the control off no body, valid or not, can tell the route is there.
 */
@Injectable()
export class ClockControlGuard implements CanActivate {
  constructor(
    private readonly clock: Clock,
    private readonly config: ConfigService,
  ) {}

  canActivate(): boolean {
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
  ) {}

  @Post()
  @Endpoint({
    summary: 'Move the service clock forward (test fixture)',
    description:
      'Exists only when the server runs with SANDBOX_CLOCK_CONTROL=true (never on production); otherwise 404. Needs no credential. Moves the clock every time rule reads (MFA, signature skew, key expiry, limit windows, quotas, webhook windows, sunsets).',
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
    // The guard has checked this; the test narrows the type.
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
    return { now: this.clock.nowDate().toISOString() };
  }
}
