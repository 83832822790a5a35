import { Body, Controller, Delete, Get, Param, Post, Query } from '@nestjs/common';
import { ApiBody, ApiTags } from '@nestjs/swagger';
import { Endpoint } from '../../common/api/endpoint.decorator.js';
import type { WorldName } from '../../common/environment.js';
import { Cred } from '../../common/http/credential.decorator.js';
import type { Credential } from '../../common/http/request-context.js';
import { PageQueryDto } from '../../common/pagination/page-query.dto.js';
import { World } from '../worlds/world.decorator.js';
import { CREATE_SCENARIO_SCHEMA, ScenarioDto, ScenarioPageDto } from './dto/scenario.dto.js';
import { ScenariosService } from './scenarios.service.js';

const NOT_FOUND = 'NOT_FOUND (details.scenario_id): no such scenario of yours';

@ApiTags('Sandbox')
@Controller('sandbox/scenarios')
export class ScenariosController {
  constructor(private readonly scenarios: ScenariosService) {}

  @Post()
  @ApiBody({ schema: CREATE_SCENARIO_SCHEMA })
  @Endpoint({
    summary: 'Inject a failure: shape the answers of an operation in your paper world',
    description: `The next \`times\` (1..1000, default 1) requests of yours in the paper world (any of your test keys) to match.operation, optionally only those about match.market_id (the body's market_id, any batch leg's, or the market in the path) or whose client_order_id starts with match.client_order_id_prefix, are shaped by effect, oldest scenario first, and carry the header Svc-Scenario: <id>. Effects: REJECT {code}: answered with that code's status and error body (any code the operation documents in x-error-codes); PARTIAL_FILL {quantity} (POST /orders only): the order takes at most quantity contracts from the book at its own limit and never rests, the rest is cancelled with cancel_reason SCENARIO; DELAY {ms 1..10000}: the operation runs after that wait; RATE_LIMIT {retry_after_seconds 1..3600}: 429 RATE_LIMITED as the per-key limit answers it, with Retry-After; UNAVAILABLE {retry_after_seconds? default 1}: 503 SERVICE_UNAVAILABLE with Retry-After; DISCONNECT: the realtime connections of the requesting key are closed with 1012, then the operation runs. The live world is never shaped. An Idempotency-Key replay of a shaped answer replays it (a REJECT's 4xx, a PARTIAL_FILL order) and spends nothing; 401, 403, 429 and 5xx answers are not stored, so a retry with the same key runs again. A sandbox reset deletes your scenarios. Scope orders:write.`,
    auth: 'key',
    scopes: ['orders:write'],
    environment: 'sandbox-only',
    status: 201,
    type: ScenarioDto,
    errors: [400, 404],
    codes: {
      400: ['VALIDATION_FAILED naming match.operation, effect.code, effect.type, times, ...'],
      404: ['NOT_FOUND (details.market_id): no such market in the paper world'],
    },
  })
  create(@Cred() c: Credential, @World() world: WorldName, @Body() body: unknown): ScenarioDto {
    return this.scenarios.create(world, c.userId, body);
  }

  @Get()
  @Endpoint({
    summary: 'Your scenarios, oldest first (keyset cursor)',
    description: `Spent scenarios stay listed with remaining 0 until deleted. Scope orders:read.`,
    auth: 'key',
    scopes: ['orders:read'],
    environment: 'sandbox-only',
    type: ScenarioPageDto,
    errors: [400],
  })
  list(
    @Cred() c: Credential,
    @World() world: WorldName,
    @Query() q: PageQueryDto,
  ): ScenarioPageDto {
    return this.scenarios.list(world, c.userId, q);
  }

  @Get(':id')
  @Endpoint({
    summary: 'Get a scenario',
    description: `remaining says how many firings are left. Scope orders:read.`,
    auth: 'key',
    scopes: ['orders:read'],
    environment: 'sandbox-only',
    type: ScenarioDto,
    errors: [404],
    codes: { 404: [NOT_FOUND] },
  })
  get(@Cred() c: Credential, @World() world: WorldName, @Param('id') id: string): ScenarioDto {
    return this.scenarios.get(world, c.userId, id);
  }

  @Delete(':id')
  @Endpoint({
    summary: 'Delete a scenario',
    description: `It shapes nothing more. Scope orders:write.`,
    auth: 'key',
    scopes: ['orders:write'],
    environment: 'sandbox-only',
    status: 204,
    errors: [404],
    codes: { 404: [NOT_FOUND] },
  })
  remove(@Cred() c: Credential, @World() world: WorldName, @Param('id') id: string): void {
    this.scenarios.remove(world, c.userId, id);
  }
}
