import { Body, Controller, Delete, Get, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Endpoint } from '../../common/api/endpoint.decorator.js';
import type { WorldName } from '../../common/environment.js';
import { Cred } from '../../common/http/credential.decorator.js';
import type { Credential } from '../../common/http/request-context.js';
import { PageQueryDto } from '../../common/pagination/page-query.dto.js';
import { World } from '../worlds/world.decorator.js';
import { DataExportsService } from './data-exports.service.js';
import { DATASET_DEFS, DATASETS } from './datasets.js';
import {
  CreateDataExportDto,
  DataExportDto,
  DataExportEstimateDto,
  DataExportPageDto,
  DatasetDto,
} from './dto/data-export.dto.js';
import { sendExportFile } from './export-download.js';

const WORLD =
  "Exports belong to the world of the credential: a test key sees and makes its paper exports, which read the paper world's data; a live key its live ones; an ephemeral world's key (POST /sandbox/worlds) that world's, which read the world's own file (its markets, orders, fills, ledger, index points), expire on the world's clock and are deleted with the world. An export of another world, or another user's, is 404 NOT_FOUND (details.export_id). A sandbox reset deletes your exports of that paper world (the shared one, or the world of the key) and their files.";
/** Each dataset's columns, from the one definition the jobs write (datasets.ts). */
const COLUMNS = DATASETS.map(
  (d) => `${d} (${DATASET_DEFS[d].fields.map((x) => x.name).join(', ')})`,
).join('; ');
const NOT_FOUND = 'NOT_FOUND (details.export_id): no such export of yours in this world';
const BODY_RULES =
  'Bad input is 400 VALIDATION_FAILED naming the field: an unknown dataset or format, start or end unparseable, end not after start, a window over 366 days, market_ids over 100, on a dataset without markets (market_ids), not shaped mkt_... or repeated (market_ids[i]), an unknown field. A well-formed market id the world does not have is 404 NOT_FOUND (details.market_id).';
const UNKNOWN_MARKET =
  'NOT_FOUND (details.market_id): a market_ids entry names no market of this world';

@ApiTags('Data')
@Controller('data')
export class DataExportsController {
  constructor(private readonly exports: DataExportsService) {}

  @Get('datasets')
  @Endpoint({
    summary: 'The datasets an export can hold, with their fields',
    description: `TRADES, MARKETS, INDEX_POINTS and CRYPTO_PRICES are the public data of the credential's world; ORDERS, FILLS and LEDGER the caller's own rows in it. Columns (CSV) or keys (JSONL), in order: ${COLUMNS}.`,
    auth: 'key',
    scopes: ['data:read'],
    type: [DatasetDto],
  })
  datasets(): DatasetDto[] {
    return this.exports.datasets();
  }

  @Post('exports/estimate')
  @Endpoint({
    summary: 'Count what an export would hold, without creating it',
    description: `${WORLD} Changes nothing and charges no quota. record_count is exact for now; size_bytes is the header plus the mean formatted size of the first 100 rows times record_count. ${BODY_RULES}`,
    auth: 'key',
    scopes: ['data:read'],
    status: 200,
    type: DataExportEstimateDto,
    errors: [404],
    codes: { 404: [UNKNOWN_MARKET] },
  })
  estimate(
    @Cred() c: Credential,
    @World() world: WorldName,
    @Body() body: CreateDataExportDto,
  ): Promise<DataExportEstimateDto> {
    return this.exports.estimate(world, c, body);
  }

  @Post('exports')
  @Endpoint({
    summary: 'Create a historical data export (built in the background)',
    description: `${WORLD} Answers 202 with the job QUEUED; it runs off the request path, at most 2 per user at once (others wait QUEUED and start in creation order), streaming the rows that exist now (rows added later are not in it; start inclusive, end exclusive) to a file; then READY with record_count, size_bytes and sha256, an EXPORT_READY notification and the data_export.ready webhook. 10 exports are kept per user and world: creating an 11th deletes the oldest finished one (READY, FAILED or EXPIRED) with its file, or is 422 EXPORT_LIMIT_REACHED when all 10 are QUEUED or RUNNING. Over EXPORT_MAX_ROWS rows is 422 EXPORT_TOO_LARGE (details rows, max_rows). With metering on, the rows counted are charged at creation to the key's monthly export-row quota (GET /usage exports); past it 429 QUOTA_EXCEEDED (details.period "month", quota "export_rows") and nothing is created. ${BODY_RULES}`,
    auth: 'key',
    scopes: ['data:read'],
    status: 202,
    type: DataExportDto,
    errors: [404, 422],
    codes: {
      404: [UNKNOWN_MARKET],
      422: ['EXPORT_TOO_LARGE', 'EXPORT_LIMIT_REACHED'],
      429: ['QUOTA_EXCEEDED'],
    },
  })
  create(
    @Cred() c: Credential,
    @World() world: WorldName,
    @Body() body: CreateDataExportDto,
  ): Promise<DataExportDto> {
    return this.exports.create(world, c, body);
  }

  @Get('exports')
  @Endpoint({
    summary: 'Your exports, oldest first (keyset cursor)',
    description: WORLD,
    auth: 'key',
    scopes: ['data:read'],
    type: DataExportPageDto,
  })
  list(
    @Cred() c: Credential,
    @World() world: WorldName,
    @Query() q: PageQueryDto,
  ): DataExportPageDto {
    return this.exports.list(world, c.userId, q);
  }

  @Get('exports/:id')
  @Endpoint({
    summary: 'Get an export',
    description: `${WORLD} A READY export becomes EXPIRED 7 days after ready_at on the service clock, and its file is deleted.`,
    auth: 'key',
    scopes: ['data:read'],
    type: DataExportDto,
    errors: [404],
    codes: { 404: [NOT_FOUND] },
  })
  get(@Cred() c: Credential, @World() world: WorldName, @Param('id') id: string): DataExportDto {
    return this.exports.get(world, c.userId, id);
  }

  @Get('exports/:id/download')
  @Endpoint({
    summary: "Download a READY export's file (streamed)",
    description: `${WORLD} text/csv or application/x-ndjson. With Accept-Encoding: gzip the whole file comes gzip-encoded (Content-Encoding: gzip). A Range header (one range of bytes=) answers 206 with that part of the file as stored (uncompressed), Content-Range and Accept-Ranges: bytes; a range past the end is 416 RANGE_NOT_SATISFIABLE with Content-Range: bytes */size. The ETag is the quoted sha256. Not yet READY (QUEUED, RUNNING, FAILED): 409 EXPORT_NOT_READY (details.status); EXPIRED: 410 EXPORT_EXPIRED.`,
    auth: 'key',
    scopes: ['data:read'],
    responseDescription: 'The file (text/csv or application/x-ndjson)',
    otherResponses: [{ status: 206, description: 'The requested byte range of the file' }],
    errors: [404, 409, 410, 416],
    codes: {
      404: [NOT_FOUND],
      409: ['EXPORT_NOT_READY'],
      410: ['EXPORT_EXPIRED'],
      416: ['RANGE_NOT_SATISFIABLE'],
    },
  })
  download(
    @Cred() c: Credential,
    @World() world: WorldName,
    @Param('id') id: string,
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
  ): void {
    sendExportFile(req, reply, this.exports.file(world, c.userId, id));
  }

  @Delete('exports/:id')
  @Endpoint({
    summary: 'Delete an export and its file',
    description: `${WORLD} A RUNNING export is stopped and its partial file removed; a second DELETE is 404.`,
    auth: 'key',
    scopes: ['data:read'],
    status: 204,
    responseDescription: 'Deleted',
    errors: [404],
    codes: { 404: [NOT_FOUND] },
  })
  remove(@Cred() c: Credential, @World() world: WorldName, @Param('id') id: string): Promise<void> {
    return this.exports.remove(world, c.userId, id);
  }
}
