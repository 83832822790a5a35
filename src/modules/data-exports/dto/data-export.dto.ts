import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsIn, IsString } from 'class-validator';
import { OptionalField } from '../../../common/validation/fields.js';
import { DATASETS, EXPORT_FORMATS, type Dataset, type ExportFormat } from '../datasets.js';
import { EXPORT_STATUSES, type ExportStatus } from '../data-exports.repository.js';

/** market_ids an export may name. */
export const MAX_EXPORT_MARKETS = 100;
/** The longest window an export may cover. */
export const MAX_WINDOW_DAYS = 366;

const TIME =
  'ISO 8601: a date (UTC midnight) or a date-time with Z or an offset; start inclusive, end exclusive, end after start, at most 366 days apart (else 400 VALIDATION_FAILED naming the field)';

export class CreateDataExportDto {
  @ApiProperty({ enum: DATASETS, description: 'Which dataset (GET /data/datasets)' })
  @IsIn(DATASETS as unknown as string[], {
    message: `dataset must be one of ${DATASETS.join(', ')}`,
  })
  dataset: Dataset;

  @ApiProperty({ example: '2026-11-01T00:00:00Z', description: TIME })
  @IsString()
  start: string;

  @ApiProperty({ example: '2026-12-01T00:00:00Z', description: TIME })
  @IsString()
  end: string;

  @ApiPropertyOptional({
    type: [String],
    maxItems: MAX_EXPORT_MARKETS,
    example: ['mkt_3f1c2b9a7d6e5f4a3b2c'],
    description: `Only these markets of the credential's world (TRADES, MARKETS, ORDERS, FILLS; another dataset naming it is 400). At most ${MAX_EXPORT_MARKETS}; an unknown or repeated id is 400 VALIDATION_FAILED naming market_ids[i]. Omitted: every market.`,
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
