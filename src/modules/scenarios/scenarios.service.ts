import { Injectable, type OnModuleInit } from '@nestjs/common';
import { Clock } from '../../common/clock/clock.js';
import { iso } from '../../common/clock/iso.js';
import { environmentOf, type WorldName } from '../../common/environment.js';
import { DomainError } from '../../common/errors/domain-error.js';
import { IdGenerator } from '../../common/ids/id-generator.js';
import { paginate, type Page } from '../../common/pagination/paginate.js';
import type { PageQueryDto } from '../../common/pagination/page-query.dto.js';
import { OpenApiService } from '../meta/openapi.service.js';
import { PaperWorldRecords } from '../worlds/paper-world-records.service.js';
import { WorldDatabases } from '../worlds/world-databases.service.js';
import { WorldMarkets } from '../worlds/world-markets.service.js';
import type { ScenarioDto } from './dto/scenario.dto.js';
import { parseScenario, type OperationFacts, type ScenarioEffect } from './scenario-rules.js';
import {
  ScenariosRepository,
  type FiredScenario,
  type MatchFacts,
  type ScenarioRow,
} from './scenarios.repository.js';
import type { WorldScoped } from '../worlds/world-scoped.js';

const SCENARIO_ID = /^scn_[a-z0-9]{1,40}$/;
const API_PREFIX = '/api/v1';

/**
 * A user's scenarios in one world, stored in that world's database. Operations and their
 * documented error codes come from the OpenAPI document itself (x-error-codes), so a scenario
 * can name exactly what the document lists.
 */
@Injectable()
export class ScenariosService implements OnModuleInit {
  private readonly repos: WorldScoped<ScenariosRepository>;
  private operations: Map<string, OperationFacts> | null = null;

  constructor(
    worlds: WorldDatabases,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly paperRecords: PaperWorldRecords,
    private readonly markets: WorldMarkets,
    private readonly contract: OpenApiService,
  ) {
    this.repos = worlds.perWorld((db) => new ScenariosRepository(db));
  }

  /** A sandbox reset deletes the user's paper scenarios. */
  onModuleInit(): void {
    this.paperRecords.registerStaged('scenarios', (userId, world) =>
      this.repos.get(world).stageDeleteAll(userId),
    );
  }

  create(world: WorldName, userId: string, body: unknown): ScenarioDto {
    const input = parseScenario(body, (name) => this.operation(name));
    if (input.match.market_id !== null) this.markets.require(world, input.match.market_id);
    const row: ScenarioRow = {
      id: this.ids.next('scn'),
      operation: input.match.operation,
      market_id: input.match.market_id,
      client_order_id_prefix: input.match.client_order_id_prefix,
      effect: JSON.stringify(input.effect),
      times: input.times,
      remaining: input.times,
      created_at: iso(this.clock.now()),
    };
    this.repos.get(world).insert(userId, row);
    return view(row, world);
  }

  list(world: WorldName, userId: string, q: PageQueryDto): Page<ScenarioDto> {
    return paginate({
      list: `scenarios:${world}`,
      keys: ['id'],
      query: q,
      fetch: (after, take) => this.repos.get(world).page(userId, after?.[0] ?? '', take),
      keyOf: (row) => [row.id],
      map: (row) => view(row, world),
    });
  }

  get(world: WorldName, userId: string, id: string): ScenarioDto {
    const row = SCENARIO_ID.test(id) ? this.repos.get(world).one(userId, id) : undefined;
    if (row === undefined) throw notFound(id);
    return view(row, world);
  }

  remove(world: WorldName, userId: string, id: string): void {
    if (!SCENARIO_ID.test(id) || !this.repos.get(world).delete(userId, id)) throw notFound(id);
  }

  /**
   * Spends and returns the oldest live scenario of the user matching a request of `operation`;
   * null when none does. Never consulted for the live world (see ScenarioGate).
   */
  take(
    world: WorldName,
    userId: string,
    operation: string,
    facts: MatchFacts | (() => MatchFacts),
  ): FiredScenario | null {
    return this.repos.get(world).take(userId, operation, facts);
  }

  /** The documented operation `name` (`POST /orders`), from the OpenAPI document. */
  private operation(name: string): OperationFacts | undefined {
    this.operations ??= catalogue(this.contract.document);
    return this.operations.get(name);
  }
}

function catalogue(doc: Record<string, unknown>): Map<string, OperationFacts> {
  const out = new Map<string, OperationFacts>();
  const paths = (doc.paths ?? {}) as Record<string, Record<string, unknown>>;
  for (const [path, ops] of Object.entries(paths)) {
    if (!path.startsWith(`${API_PREFIX}/`)) continue;
    for (const [method, op] of Object.entries(ops)) {
      if (op === null || typeof op !== 'object') continue;
      const name = `${method.toUpperCase()} ${path.slice(API_PREFIX.length)}`;
      const codes = (op as Record<string, unknown>)['x-error-codes'];
      out.set(name, {
        codes: Array.isArray(codes) ? codes.map(String) : [],
        placesOrder: name === 'POST /orders',
      });
    }
  }
  return out;
}

function view(row: ScenarioRow, world: WorldName): ScenarioDto {
  return {
    id: row.id,
    match: {
      operation: row.operation,
      market_id: row.market_id,
      client_order_id_prefix: row.client_order_id_prefix,
    },
    effect: JSON.parse(row.effect) as ScenarioEffect,
    times: row.times,
    remaining: row.remaining,
    created_at: row.created_at,
    environment: environmentOf(world),
  };
}

function notFound(id: string): DomainError {
  return new DomainError('NOT_FOUND', `No scenario ${id.slice(0, 60)}`, { scenario_id: id });
}
