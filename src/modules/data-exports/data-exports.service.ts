import { Injectable, type OnModuleInit } from '@nestjs/common';
import { environmentOf, type WorldName } from '../../common/environment.js';
import {
  DomainError,
  validationFailed,
  type FieldError,
} from '../../common/errors/domain-error.js';
import type { Credential } from '../../common/http/request-context.js';
import { IdGenerator } from '../../common/ids/id-generator.js';
import { MARKET_ID } from '../../common/ids/id-patterns.js';
import type { PageQueryDto } from '../../common/pagination/page-query.dto.js';
import { paginate, type Page } from '../../common/pagination/paginate.js';
import { instant } from '../../common/validation/instant.js';
import { ConfigService } from '../../config/config.service.js';
import { LimitsService } from '../limits/limits.service.js';
import { PaperWorldRecords } from '../worlds/paper-world-records.service.js';
import { MarketLookup } from '../worlds/world-markets.service.js';
import { WorldClocks } from '../worlds/world-clocks.service.js';
import { WorldDatabases } from '../worlds/world-databases.service.js';
import type { ExportRow } from './data-exports.repository.js';
import { DATASET_DEFS, DATASETS, type ExportScope } from './datasets.js';
import {
  MAX_WINDOW_DAYS,
  type CreateDataExportDto,
  type DataExportDto,
  type DataExportEstimateDto,
  type DatasetDto,
} from './dto/data-export.dto.js';
import { ExportRunner } from './export-runner.service.js';
import type { WorldScoped } from '../worlds/world-scoped.js';

/** Exports kept per user and world: the 11th removes the oldest finished one. */
export const MAX_KEPT_EXPORTS = 10;
const EXPORT_ID = /^dex_[a-z0-9]{1,40}$/;
const DAY_MS = 86_400_000;

/** A finished export's file, for the download. */
export interface ExportFile {
  id: string;
  path: string;
  format: ExportRow['format'];
  size: number;
  sha256: string;
}

/**
 * Historical data exports of one user in one world (live, paper or an ephemeral world): created
 * (counted, checked and charged) here, built by the {@link ExportRunner}, kept 10 per user and
 * world, read back and deleted.
 */
@Injectable()
export class DataExportsService implements OnModuleInit {
  private readonly markets: WorldScoped<MarketLookup>;

  constructor(
    worlds: WorldDatabases,
    private readonly runner: ExportRunner,
    private readonly clocks: WorldClocks,
    private readonly ids: IdGenerator,
    private readonly config: ConfigService,
    private readonly limits: LimitsService,
    private readonly paperRecords: PaperWorldRecords,
  ) {
    this.markets = worlds.perWorld((db) => new MarketLookup(db));
  }

  /**
   * A sandbox reset deletes the user's exports of that paper world (the shared one or an
   * ephemeral world) and their files, a running one stopped; deleting an ephemeral world stops
   * its jobs and removes its folder of files.
   */
  onModuleInit(): void {
    // The rows go in the reset's own transaction; their running jobs stop and their files go
    // once it has committed.
    this.paperRecords.registerStaged('exports', (userId, world) => {
      if (world === 'live') return () => 0;
      const deleted = this.runner.parts.repos.get(world).stageDeleteOfUser(userId);
      return async () => {
        const rows = deleted();
        for (const row of rows) {
          await this.runner.cancel(row.id);
          this.runner.parts.files.remove(world, row.id, row.format);
        }
        return rows.length;
      };
    });
    this.paperRecords.registerWorld('exports', (world) => this.runner.clearWorld(world));
  }

  datasets(): DatasetDto[] {
    return DATASETS.map((d) => ({
      dataset: d,
      description: DATASET_DEFS[d].description,
      fields: DATASET_DEFS[d].fields.map((f) => f.name),
      own: DATASET_DEFS[d].own,
    }));
  }

  async estimate(
    world: WorldName,
    c: Credential,
    body: CreateDataExportDto,
  ): Promise<DataExportEstimateDto> {
    const scope = this.scope(world, c, body);
    const reader = this.runner.parts.readers.get(world);
    const hi = reader.lastRowid(scope.def);
    const { count, size } = await this.runner.estimate(world, scope, body.format, hi);
    return { record_count: count, size_bytes: size };
  }

  async create(world: WorldName, c: Credential, body: CreateDataExportDto): Promise<DataExportDto> {
    const scope = this.scope(world, c, body);
    const repo = this.runner.parts.repos.get(world);
    const reader = this.runner.parts.readers.get(world);
    const max = this.config.values.exportMaxRows;
    this.assertRoom(world, c.userId);
    const hi = reader.lastRowid(scope.def);
    const count = await this.runner.count(world, scope, hi, max);
    if (count > max) {
      throw new DomainError(
        'EXPORT_TOO_LARGE',
        `The export would hold more than ${max} rows (EXPORT_MAX_ROWS): narrow the window or market_ids`,
        { rows: count, max_rows: max },
      );
    }
    await this.limits.chargeExportRows(c, count);
    const row: ExportRow = {
      id: this.ids.next('dex'),
      user_id: c.userId,
      dataset: body.dataset,
      format: body.format,
      start: scope.start,
      end: scope.end,
      market_ids: scope.marketIds === null ? null : JSON.stringify(scope.marketIds),
      status: 'QUEUED',
      last_rowid: hi,
      counted_rows: count,
      record_count: null,
      size_bytes: null,
      sha256: null,
      error: null,
      created_at: this.clocks.for(world).nowDate().toISOString(),
      ready_at: null,
      expires_at: null,
    };
    const evicted = repo.transaction(() => {
      let gone: ExportRow | undefined;
      if (repo.count(c.userId) >= MAX_KEPT_EXPORTS) {
        gone = repo.oldestFinished(c.userId);
        if (gone === undefined) throw limitReached();
        repo.delete(gone.id);
      }
      repo.insert(row);
      return gone;
    });
    if (evicted !== undefined) this.runner.parts.files.remove(world, evicted.id, evicted.format);
    this.runner.wake(world);
    // The job as created (QUEUED), whether or not a slot started it already.
    return view(world, row);
  }

  list(world: WorldName, userId: string, q: PageQueryDto): Page<DataExportDto> {
    this.runner.sweep(world);
    return paginate({
      list: `data-exports:${world}`,
      keys: ['id'],
      query: q,
      fetch: (after, take) =>
        this.runner.parts.repos.get(world).page(userId, after?.[0] ?? '', take),
      keyOf: (row) => [row.id],
      map: (row) => view(world, row),
    });
  }

  get(world: WorldName, userId: string, id: string): DataExportDto {
    this.runner.sweep(world);
    return view(world, this.owned(world, userId, id));
  }

  /** The READY export's file; 409 EXPORT_NOT_READY before, 410 EXPORT_EXPIRED after. */
  file(world: WorldName, userId: string, id: string): ExportFile {
    this.runner.sweep(world);
    const row = this.owned(world, userId, id);
    if (row.status === 'EXPIRED') {
      throw new DomainError(
        'EXPORT_EXPIRED',
        `Export ${id} expired at ${row.expires_at}: create it again`,
        {
          export_id: id,
          expired_at: row.expires_at,
        },
      );
    }
    const files = this.runner.parts.files;
    const size = row.status === 'READY' ? files.size(world, id, row.format) : null;
    if (row.status === 'READY' && size === null) {
      // Its file is gone: in cluster mode, made by a previous writer of the world on its own disk
      // (docs/cluster.md).
      throw new DomainError(
        'EXPORT_NOT_READY',
        `Export ${id}'s file is missing from this instance's disk (in cluster mode, a previous writer of the world made it): create it again`,
        { export_id: id, status: row.status },
      );
    }
    if (row.status !== 'READY' || size === null || row.sha256 === null) {
      throw new DomainError('EXPORT_NOT_READY', `Export ${id} is ${row.status}, not READY`, {
        export_id: id,
        status: row.status,
      });
    }
    return {
      id,
      path: files.path(world, id, row.format),
      format: row.format,
      size,
      sha256: row.sha256,
    };
  }

  /** Deletes the export and its file; a running one is stopped and its partial file removed. */
  async remove(world: WorldName, userId: string, id: string): Promise<void> {
    const row = this.owned(world, userId, id);
    this.runner.parts.repos.get(world).delete(row.id);
    await this.runner.cancel(row.id);
    this.runner.parts.files.remove(world, row.id, row.format);
    this.runner.schedule();
  }

  private owned(world: WorldName, userId: string, id: string): ExportRow {
    const row = EXPORT_ID.test(id) ? this.runner.parts.repos.get(world).get(id) : undefined;
    if (row === undefined || row.user_id !== userId) {
      throw new DomainError('NOT_FOUND', `No export ${id}`, { export_id: id });
    }
    return row;
  }

  /** 10 kept: the 11th needs a finished one to replace. */
  private assertRoom(world: WorldName, userId: string): void {
    const repo = this.runner.parts.repos.get(world);
    if (repo.count(userId) >= MAX_KEPT_EXPORTS && repo.oldestFinished(userId) === undefined) {
      throw limitReached();
    }
  }

  /** The body checked against the world: the window and the markets. */
  private scope(world: WorldName, c: Credential, body: CreateDataExportDto): ExportScope {
    const def = DATASET_DEFS[body.dataset];
    const errors: FieldError[] = [];
    const time = (v: string, field: string): string | undefined => {
      try {
        return instant(v, field);
      } catch {
        errors.push({
          field,
          message: `${field} must be an ISO 8601 date, or date-time with Z or an offset`,
        });
        return undefined;
      }
    };
    const start = time(body.start, 'start');
    const end = time(body.end, 'end');
    if (start !== undefined && end !== undefined) {
      const span = Date.parse(end) - Date.parse(start);
      if (span <= 0) errors.push({ field: 'end', message: 'end must be after start' });
      else if (span > MAX_WINDOW_DAYS * DAY_MS) {
        errors.push({
          field: 'end',
          message: `end must be at most ${MAX_WINDOW_DAYS} days after start`,
        });
      }
    }
    let marketIds: string[] | null = null;
    if (body.market_ids !== undefined) {
      if (def.market === undefined) {
        errors.push({
          field: 'market_ids',
          message: `market_ids must be left out: ${body.dataset} has no markets to narrow by`,
        });
      } else {
        marketIds = body.market_ids;
        const seen = new Set<string>();
        marketIds.forEach((m, i) => {
          const field = `market_ids[${i}]`;
          if (!MARKET_ID.test(m)) {
            errors.push({
              field,
              message: `${field} must be a market id (mkt_ followed by a-z, 0-9)`,
            });
          } else if (seen.has(m)) {
            errors.push({ field, message: `${field} must not repeat an id (${m} is named twice)` });
          }
          seen.add(m);
        });
      }
    }
    if (errors.length > 0) throw validationFailed(errors);
    // A well-formed id the world does not have is an unknown id (404), as everywhere: the body
    // itself was valid, which is all a request schema can say.
    if (marketIds !== null) {
      const known = this.markets.get(world).known(marketIds);
      const unknown = marketIds.find((m) => !known.has(m));
      if (unknown !== undefined) {
        throw new DomainError('NOT_FOUND', `No market ${unknown} in this world`, {
          market_id: unknown,
        });
      }
    }
    return { def, userId: c.userId, start: start!, end: end!, marketIds };
  }
}

function limitReached(): DomainError {
  return new DomainError(
    'EXPORT_LIMIT_REACHED',
    `You keep ${MAX_KEPT_EXPORTS} exports in this world and none has finished: wait for one or delete one`,
    { limit: MAX_KEPT_EXPORTS },
  );
}

function view(world: WorldName, r: ExportRow): DataExportDto {
  return {
    id: r.id,
    dataset: r.dataset,
    format: r.format,
    start: r.start,
    end: r.end,
    market_ids: r.market_ids === null ? null : (JSON.parse(r.market_ids) as string[]),
    status: r.status,
    record_count: r.record_count,
    size_bytes: r.size_bytes,
    sha256: r.sha256,
    created_at: r.created_at,
    ready_at: r.ready_at,
    expires_at: r.expires_at,
    error: r.error,
    environment: environmentOf(world),
  };
}
