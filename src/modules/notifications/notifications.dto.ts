import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean } from 'class-validator';
import { PageQueryDto } from '../../common/pagination/page-query.dto.js';
import { IsInstant } from '../../common/validation/instant.js';
import { OptionalField } from '../../common/validation/fields.js';

/** The notification types written today; more may come (treat an unknown one as generic). */
export const NOTIFICATION_TYPES = [
  'WEBHOOK_SUSPENDED',
  'TIER_REQUEST_APPROVED',
  'TIER_REQUEST_DENIED',
  'COMMENT_REPLY',
  'RFQ_QUOTE_RECEIVED',
  'RFQ_QUOTE_ACCEPTED',
  'EXPORT_READY',
  'MARKET_RESOLVED',
] as const;

export class NotificationsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ description: 'Only unread notifications' })
  @OptionalField()
  @Transform(({ value }: { value: unknown }) =>
    value === 'true' ? true : value === 'false' ? false : value,
  )
  @IsBoolean()
  unread?: boolean;
}

export class NotificationDto {
  @ApiProperty({ example: 'ntf_01jd3x000000000000abcd' }) id: string;

  @ApiProperty({
    example: 'MARKET_RESOLVED',
    description: `UPPER_SNAKE; today ${NOTIFICATION_TYPES.join(', ')}. New types may be added: show an unknown one by its title and body.`,
  })
  type: string;

  @ApiProperty({ description: 'Plain text, returned exactly as stored (never markup)' })
  title: string;

  @ApiProperty({ description: 'Plain text, returned exactly as stored (never markup)' })
  body: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      'What the notification is about, by type: MARKET_RESOLVED {market_id, outcome, payout_cents}; WEBHOOK_SUSPENDED {endpoint_id, url, consecutive_failures}; TIER_REQUEST_* {request_id, key_id, tier}; COMMENT_REPLY {comment_id, parent_id, market_id, author: {id, username, display_name}} (the reply, the comment it answers, its market and its author)',
  })
  data: Record<string, unknown>;

  @ApiProperty({
    enum: ['live', 'test'],
    description: 'The world it belongs to: it is listed, read and counted from that world only',
  })
  environment: 'live' | 'test';

  @ApiProperty({ format: 'date-time' }) created_at: string;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true }) read_at: string | null;
}

export class NotificationPageDto {
  @ApiProperty({ type: [NotificationDto] }) data: NotificationDto[];
  @ApiProperty({ type: 'string', nullable: true }) next_cursor: string | null;
}

export class ReadAllNotificationsDto {
  @ApiPropertyOptional({
    format: 'date-time',
    description:
      'Mark only notifications created at or before this instant (inclusive; ISO 8601: a date, or a date-time with Z or an offset). Absent: all of them.',
  })
  @OptionalField()
  @IsInstant()
  before?: string;
}

export class ReadAllResultDto {
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'How many unread notifications this call marked read',
  })
  marked: number;
}

export class UnreadCountDto {
  @ApiProperty({ type: 'integer', minimum: 0, description: 'Unread notifications in your world' })
  unread: number;
}
