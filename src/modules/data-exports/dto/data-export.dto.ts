import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsIn, IsString } from 'class-validator';
import { SchemaRules } from '../../../common/api/schema-rules.js';
import { MARKET_ID_SOURCE } from '../../../common/ids/id-patterns.js';
import { OptionalField } from '../../../common/validation/fields.js';
import {
  DATASET_DEFS,
  DATASETS,
  EXPORT_FORMATS,
  type Dataset,
  type ExportFormat,
} from '../datasets.js';
import { EXPORT_STATUSES, type ExportStatus } from '../data-exports.repository.js';

/** market_ids an export may name. */
export const MAX_EXPORT_MARKETS = 100;
/** The longest window an export may cover. */
export const MAX_WINDOW_DAYS = 366;

const TIME =
  'An RFC 3339 date (UTC midnight) or date-time (T or t, Z, z or an offset; the service also takes ISO 8601 date-times without seconds); start inclusive, end exclusive, end after start, at most 366 days apart (else 400 VALIDATION_FAILED naming the field)';

/** A date or a date-time, as the service reads start and end (parseInstant). */
const INSTANT_SCHEMA = {
  type: 'string' as const,
  anyOf: [
    { type: 'string', format: 'date' },
    { type: 'string', format: 'date-time' },
  ],
};

/** Datasets of rows that belong to no market (index points, crypto prices, ledger entries). */
export const DATASETS_WITHOUT_MARKETS = DATASETS.filter(
  (d) => DATASET_DEFS[d].market === undefined,
);

/** What DataExportsService.scope refuses with 400: market_ids on a dataset without markets. */
@SchemaRules([
  {
    if: { required: ['dataset'], properties: { dataset: { enum: DATASETS_WITHOUT_MARKETS } } },
    then: { properties: { market_ids: { not: {} } } },
  },
])
export class CreateDataExportDto {
  @ApiProperty({ enum: DATASETS, description: 'Which dataset (GET /data/datasets)' })
  @IsIn(DATASETS as unknown as string[], {
    message: `dataset must be one of ${DATASETS.join(', ')}`,
  })
  dataset: Dataset;

  @ApiProperty({ ...INSTANT_SCHEMA, example: '2026-11-01T00:00:00Z', description: TIME })
  @IsString()
  start: string;

  @ApiProperty({ ...INSTANT_SCHEMA, example: '2026-12-01T00:00:00Z', description: TIME })
  @IsString()
  end: string;

  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'string', pattern: MARKET_ID_SOURCE },
    maxItems: MAX_EXPORT_MARKETS,
    uniqueItems: true,
    example: ['mkt_3f1c2b9a7d6e5f4a3b2c'],
    description: `Only these markets of the credential's world. Only on datasets with markets (${DATASETS.filter((d) => !DATASETS_WITHOUT_MARKETS.includes(d)).join(', ')}): on ${DATASETS_WITHOUT_MARKETS.join(', ')} it must be left out (even empty), else 400 naming market_ids. At most ${MAX_EXPORT_MARKETS}; an id not shaped mkt_... or repeated is 400 VALIDATION_FAILED naming market_ids[i]; a well-formed id of no market in this world is 404 NOT_FOUND (details.market_id), nothing created. Omitted: every market.`,
  })
  @OptionalField()
  @IsArray()
  @ArrayMaxSize(MAX_EXPORT_MARKETS)
  @IsString({ each: true })
  market_ids?: string[];

  @ApiProperty({
    enum: EXPORT_FORMATS,
    description: 'CSV (header row, LF) or JSONL (one JSON object a line)',
  })
  @IsIn(EXPORT_FORMATS as unknown as string[], { message: 'format must be CSV or JSONL' })
  format: ExportFormat;
}

export class DatasetDto {
  @ApiProperty({ enum: DATASETS })
  dataset: Dataset;

  @ApiProperty()
  description: string;

  @ApiProperty({ type: [String], description: 'Columns (CSV) or keys (JSONL), in order' })
  fields: string[];

  @ApiProperty({ description: "true: the caller's own rows; false: the world's public data" })
  own: boolean;
}

export class DataExportEstimateDto {
  @ApiProperty({ type: 'integer', description: 'Rows the export would hold now (exact)' })
  record_count: number;

  @ApiProperty({
    type: 'integer',
    description:
      'Estimated file size in bytes (uncompressed): the header plus the mean size of the first 100 rows, formatted, times record_count (exact when record_count <= 100)',
  })
  size_bytes: number;
}

export class DataExportDto {
  @ApiProperty({ example: 'dex_01jd3x000000000000abcd' })
  id: string;

  @ApiProperty({ enum: DATASETS })
  dataset: Dataset;

  @ApiProperty({ enum: EXPORT_FORMATS })
  format: ExportFormat;

  @ApiProperty({ format: 'date-time' })
  start: string;

  @ApiProperty({ format: 'date-time' })
  end: string;

  @ApiProperty({ type: [String], nullable: true })
  market_ids: string[] | null;

  @ApiProperty({ enum: EXPORT_STATUSES })
  status: ExportStatus;

  @ApiProperty({ type: 'integer', nullable: true, description: 'Rows written (READY, EXPIRED)' })
  record_count: number | null;

  @ApiProperty({ type: 'integer', nullable: true, description: 'File size in bytes, uncompressed' })
  size_bytes: number | null;

  @ApiProperty({
    type: 'string',
    nullable: true,
    description: 'sha256 of the file, hex (also its ETag)',
  })
  sha256: string | null;

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  ready_at: string | null;

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    description: 'ready_at + 7 days',
  })
  expires_at: string | null;

  @ApiProperty({ type: 'string', nullable: true, description: 'Why it FAILED' })
  error: string | null;

  @ApiProperty({ enum: ['live', 'test'] })
  environment: 'live' | 'test';
}

export class DataExportPageDto {
  @ApiProperty({ type: [DataExportDto], description: 'Oldest first' })
  data: DataExportDto[];

  @ApiProperty({ type: 'string', nullable: true })
  next_cursor: string | null;
}
