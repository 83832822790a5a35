import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { Environment } from '../../../common/environment.js';
import {
  EFFECT_TYPES,
  MAX_DELAY_MS,
  MAX_RETRY_AFTER_SECONDS,
  MAX_TIMES,
} from '../scenario-rules.js';

export class ScenarioMatchDto {
  @ApiProperty({
    example: 'POST /orders',
    description:
      'The operation, as this document names it: the method, a space, and the path template without /api/v1 (e.g. "POST /orders", "DELETE /orders/{id}", "GET /markets/{id}/book")',
  })
  operation: string;

  @ApiProperty({
    type: 'string',
    nullable: true,
    description:
      "Only requests about this market: the body's market_id (any leg's, for POST /orders/batch) or the market id in the path",
  })
  market_id: string | null;

  @ApiProperty({
    type: 'string',
    nullable: true,
    description:
      "Only requests whose body's client_order_id (any leg's, for POST /orders/batch) starts with this",
  })
  client_order_id_prefix: string | null;
}

export class ScenarioEffectDto {
  @ApiProperty({ enum: EFFECT_TYPES })
  type: string;

  @ApiPropertyOptional({ description: 'REJECT: the error code answered' })
  code?: string;

  @ApiPropertyOptional({ type: 'integer', description: 'PARTIAL_FILL: contracts filled at most' })
  quantity?: number;

  @ApiPropertyOptional({ type: 'integer', description: 'DELAY: milliseconds waited' })
  ms?: number;

  @ApiPropertyOptional({
    type: 'integer',
    description: 'RATE_LIMIT and UNAVAILABLE: the Retry-After answered',
  })
  retry_after_seconds?: number;
}

export class ScenarioDto {
  @ApiProperty({ example: 'scn_01jd8v5y3k0000a1b2c3d4e5' })
  id: string;

  @ApiProperty({ type: ScenarioMatchDto })
  match: ScenarioMatchDto;

  @ApiProperty({ type: ScenarioEffectDto })
  effect: ScenarioEffectDto;

  @ApiProperty({ type: 'integer', minimum: 1, maximum: MAX_TIMES })
  times: number;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'Firings left; 0: spent (it stays listed until deleted)',
  })
  remaining: number;

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({ enum: ['test'], description: 'Scenarios shape the paper world only' })
  environment: Environment;
}

export class ScenarioPageDto {
  @ApiProperty({ type: [ScenarioDto], description: 'Oldest first (creation order)' })
  data: ScenarioDto[];

  @ApiProperty({ type: 'string', nullable: true })
  next_cursor: string | null;
}

/** The request body, as published (the rules themselves are in scenario-rules.ts). */
export const CREATE_SCENARIO_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['match', 'effect'],
  properties: {
    match: {
      type: 'object',
      additionalProperties: false,
      required: ['operation'],
      properties: {
        operation: { type: 'string', example: 'POST /orders' },
        market_id: { type: 'string' },
        client_order_id_prefix: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,64}$' },
      },
    },
    effect: {
      type: 'object',
      additionalProperties: false,
      required: ['type'],
      properties: {
        type: { type: 'string', enum: [...EFFECT_TYPES] },
        code: { type: 'string', description: 'REJECT: a code the operation documents' },
        quantity: { type: 'integer', minimum: 1, description: 'PARTIAL_FILL' },
        ms: { type: 'integer', minimum: 1, maximum: MAX_DELAY_MS, description: 'DELAY' },
        retry_after_seconds: {
          type: 'integer',
          minimum: 1,
          maximum: MAX_RETRY_AFTER_SECONDS,
          description: 'RATE_LIMIT (required) and UNAVAILABLE (default 1)',
        },
      },
    },
    times: { type: 'integer', minimum: 1, maximum: MAX_TIMES, default: 1 },
  },
  example: {
    match: { operation: 'POST /orders', client_order_id_prefix: 'ci-' },
    effect: { type: 'REJECT', code: 'INSUFFICIENT_FUNDS' },
    times: 2,
  },
};
