import { ApiProperty } from '@nestjs/swagger';
import { IsIn, IsInt, Max, Min } from 'class-validator';
import {
  ATTEMPT_OUTCOMES,
  SIMULATED_FAILURE_MODES,
  type SimulatedFailureMode,
} from './webhook-attempts.repository.js';
import { DeliveryDto } from './webhooks.dto.js';

export const MAX_SIMULATED_FAILURES = 1000;

export class SimulateFailuresDto {
  @ApiProperty({
    type: 'integer',
    minimum: 1,
    maximum: MAX_SIMULATED_FAILURES,
    description: 'How many of the next attempts fail (it replaces any count still pending)',
  })
  @IsInt()
  @Min(1)
  @Max(MAX_SIMULATED_FAILURES)
  count: number;

  @ApiProperty({
    enum: SIMULATED_FAILURE_MODES,
    description:
      'HTTP_500: the receiver answered 500; TIMEOUT: no answer within WEBHOOK_TIMEOUT_MS; CONNECTION_REFUSED: the connection was refused',
  })
  @IsIn(SIMULATED_FAILURE_MODES)
  mode: SimulatedFailureMode;
}

export class SimulatedFailuresDto {
  @ApiProperty({ example: 'whe_01jd3x000000000000abcd' }) endpoint_id: string;

  @ApiProperty({ type: 'integer', description: 'Simulated failures still to come (0: none)' })
  pending: number;

  @ApiProperty({
    type: 'string',
    enum: SIMULATED_FAILURE_MODES,
    nullable: true,
    description: 'null when none is pending',
  })
  mode: SimulatedFailureMode | null;
}

export class AttemptRequestDto {
  @ApiProperty({ enum: ['POST'] }) method: string;
  @ApiProperty() url: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    description:
      'The headers sent (or, when simulated, that would have been): Svc-Webhook-Signature is shown, never a secret',
  })
  headers: Record<string, string>;

  @ApiProperty({ description: 'The raw JSON body (the event, the same on every attempt)' })
  body: string;
}

export class AttemptResponseDto {
  @ApiProperty({ type: 'integer' }) status: number;

  @ApiProperty({ description: 'The first 4 KiB (4096 bytes, read as UTF-8) of the answer body' })
  body: string;

  @ApiProperty({ description: 'The body was longer than 4 KiB' })
  body_truncated: boolean;
}

export class AttemptDto {
  @ApiProperty({ type: 'integer', description: '1 for the first attempt' }) number: number;
  @ApiProperty({ format: 'date-time' }) started_at: string;

  @ApiProperty({ type: 'integer', description: 'Wall-clock milliseconds the attempt took' })
  duration_ms: number;

  @ApiProperty({
    enum: ATTEMPT_OUTCOMES,
    description:
      'SUCCEEDED (a 2xx), HTTP_ERROR (any other status), TIMEOUT, CONNECTION_REFUSED, CONNECTION_ERROR (another network failure) or BLOCKED (a disallowed target address)',
  })
  outcome: string;

  @ApiProperty({
    description: 'A simulated failure (POST /webhooks/{id}/simulate-failures): nothing was sent',
  })
  simulated: boolean;

  @ApiProperty({ type: AttemptRequestDto }) request: AttemptRequestDto;

  @ApiProperty({
    type: AttemptResponseDto,
    nullable: true,
    description: 'null when no answer came (timeout, refused or broken connection)',
  })
  response: AttemptResponseDto | null;

  @ApiProperty({ type: 'string', nullable: true }) error: string | null;
}

export class DeliveryDetailDto extends DeliveryDto {
  @ApiProperty({
    type: [AttemptDto],
    description:
      'Each attempt, oldest first. An attempt a crash or shutdown cut short is counted in attempts but has no entry.',
  })
  attempt_log: AttemptDto[];
}
