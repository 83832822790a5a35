import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsIn,
  IsInt,
  IsString,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { PageQueryDto } from '../../common/pagination/page-query.dto.js';
import { WEBHOOK_EVENT_TYPES } from './webhook-outbox.service.js';
import { OptionalField, PlainText } from '../../common/validation/fields.js';
import { WEBHOOK_URL_SOURCE } from './url-safety.js';

const EVENT_CHOICES = ['*', ...WEBHOOK_EVENT_TYPES];

/** The url as the request schemas state it; the service's checks (url-safety.ts) enforce it. */
const URL_DOC = {
  maxLength: 2048,
  pattern: WEBHOOK_URL_SOURCE,
  description:
    'Absolute http(s) URL: scheme://host[:port][/path][?query] with a host name, a dotted IPv4 address or a bracketed IPv6 one, a port 1..65535, no user or password, no fragment (#), no spaces or control characters, at most 2048 characters (else 400 VALIDATION_FAILED naming url). In production (APP_ENV=production) https only: http is 400. The target must be public: loopback, private, link-local, CGNAT and cloud metadata addresses (also as a name resolving to one) are 422 WEBHOOK_URL_NOT_ALLOWED, unless the deployment allows private targets (WEBHOOK_ALLOW_PRIVATE_TARGETS, never for metadata).',
};

export class CreateWebhookDto {
  @ApiProperty({ ...URL_DOC, example: 'https://example.com/hooks/svc' })
  @IsString()
  @MaxLength(2048)
  url: string;

  @ApiProperty({
    type: [String],
    enum: EVENT_CHOICES,
    description: 'Event types to receive; "*" for all',
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(20)
  @ArrayUnique()
  @IsIn(EVENT_CHOICES, { each: true })
  events: string[];

  @ApiPropertyOptional({
    maxLength: 500,
    description: 'Visible text (line breaks allowed): no other control characters',
  })
  @OptionalField()
  @IsString()
  @MaxLength(500)
  @PlainText({ multiline: true })
  description?: string;
}

export class UpdateWebhookDto {
  @ApiPropertyOptional(URL_DOC)
  @OptionalField()
  @IsString()
  @MaxLength(2048)
  url?: string;

  @ApiPropertyOptional({ type: [String], enum: EVENT_CHOICES })
  @OptionalField()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(20)
  @ArrayUnique()
  @IsIn(EVENT_CHOICES, { each: true })
  events?: string[];

  @ApiPropertyOptional({
    maxLength: 500,
    description: 'Visible text (line breaks allowed): no other control characters',
  })
  @OptionalField()
  @IsString()
  @MaxLength(500)
  @PlainText({ multiline: true })
  description?: string;
}

export class RotateSecretDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: 72,
    description:
      'How long the retired secret keeps co-signing; at most WEBHOOK_SECRET_GRACE_HOURS (default 24, cap 72)',
  })
  @OptionalField()
  @IsInt()
  @Min(0)
  @Max(72)
  grace_hours?: number;
}

export class TestEventDto {
  @ApiPropertyOptional({
    enum: WEBHOOK_EVENT_TYPES,
    default: 'webhook.test',
    description:
      'The event type of the sample to send (any documented type, subscribed or not); types other than webhook.test go to test endpoints only',
  })
  @OptionalField()
  @IsIn(WEBHOOK_EVENT_TYPES)
  type?: (typeof WEBHOOK_EVENT_TYPES)[number];
}

export class DeliveriesQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: ['PENDING', 'HELD', 'SUCCEEDED', 'DEAD_LETTERED', 'CANCELLED'] })
  @OptionalField()
  @IsIn(['PENDING', 'HELD', 'SUCCEEDED', 'DEAD_LETTERED', 'CANCELLED'])
  status?: string;
}

export class WebhookEndpointDto {
  @ApiProperty({ example: 'whe_01jd3x000000000000abcd' })
  id: string;

  @ApiProperty()
  url: string;

  @ApiProperty()
  description: string;

  @ApiProperty({ type: [String] })
  events: string[];

  @ApiProperty({
    enum: ['live', 'test'],
    description: 'The environment whose events this endpoint receives',
  })
  environment: string;

  @ApiProperty({ enum: ['ACTIVE', 'SUSPENDED', 'DISABLED'] })
  status: string;

  @ApiProperty({ type: 'integer' })
  secret_version: number;

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    description:
      'The rotation grace window: until when the retired secret still co-signs deliveries (a second v1= candidate); null when no grace window is running',
  })
  previous_secret_expires_at: string | null;

  @ApiProperty({
    type: 'number',
    nullable: true,
    description: 'null when the 24 h window holds no terminal delivery (unknown, not 1.0)',
  })
  success_rate_24h: number | null;

  @ApiProperty({ type: 'integer' })
  consecutive_failures: number;

  @ApiProperty({ type: 'integer' })
  dlq_count: number;

  @ApiProperty({ type: 'integer' })
  replays_24h: number;

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({ format: 'date-time' })
  updated_at: string;
}

export class CreatedWebhookDto extends WebhookEndpointDto {
  @ApiProperty({ description: 'whsec_...: the signing secret, shown this once' })
  secret: string;
}

export class RotatedWebhookDto extends CreatedWebhookDto {
  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    description: 'Until when the retired secret co-signs',
  })
  previous_secret_valid_until: string | null;
}

export class WebhookPageDto {
  @ApiProperty({ type: [WebhookEndpointDto] })
  data: WebhookEndpointDto[];

  @ApiProperty({ type: 'string', nullable: true })
  next_cursor: string | null;
}

export class HealthDto {
  @ApiProperty() endpoint_id: string;
  @ApiProperty({ enum: ['ACTIVE', 'SUSPENDED', 'DISABLED'] }) status: string;
  @ApiProperty({ type: 'integer' }) succeeded_24h: number;
  @ApiProperty({ type: 'integer' }) dead_letter_24h: number;
  @ApiProperty({ type: 'number', nullable: true }) success_rate_24h: number | null;
  @ApiProperty({ type: 'integer' }) succeeded_7d: number;
  @ApiProperty({ type: 'integer' }) dead_letter_7d: number;
  @ApiProperty({ type: 'number', nullable: true }) success_rate_7d: number | null;
  @ApiProperty({ type: 'integer' }) consecutive_failures: number;
  @ApiProperty({ type: 'integer' }) dlq_count: number;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true }) last_success_at:
    string | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true }) last_failure_at:
    string | null;
  @ApiProperty({ type: 'string', nullable: true }) last_error: string | null;
  @ApiProperty({ type: 'integer' }) replays_24h: number;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true }) suspended_at: string | null;
  @ApiProperty({ type: 'string', nullable: true }) suspension_reason: string | null;
}

export class DeliveryDto {
  @ApiProperty({ example: 'dlv_01jd3x000000000000abcd' }) id: string;
  @ApiProperty() event_id: string;
  @ApiProperty() event_type: string;
  @ApiProperty({ enum: ['PENDING', 'HELD', 'SUCCEEDED', 'DEAD_LETTERED', 'CANCELLED'] })
  status: string;
  @ApiProperty({
    type: 'integer',
    description:
      'POSTs made, counted when each ends; one that a crash or shutdown cut short (the receiver may have got it) is counted at the next start, and sent again unless it was the last the schedule allows',
  })
  attempts: number;
  @ApiProperty() is_replay: boolean;
  @ApiProperty({ type: 'string', nullable: true }) replay_of: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true }) last_attempt_at:
    string | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true }) next_attempt_at:
    string | null;
  @ApiProperty({ type: 'integer', nullable: true }) response_status: number | null;
  @ApiProperty({ type: 'string', nullable: true }) last_error: string | null;
}

export class DeliveryPageDto {
  @ApiProperty({ type: [DeliveryDto] }) data: DeliveryDto[];
  @ApiProperty({ type: 'string', nullable: true }) next_cursor: string | null;
}
