import { Controller, Get, Param, Post, Query } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean } from 'class-validator';
import { Endpoint } from '../../common/api/endpoint.decorator.js';
import { Cred } from '../../common/http/credential.decorator.js';
import type { Credential } from '../../common/http/request-context.js';
import { PageQueryDto } from '../../common/pagination/page-query.dto.js';
import { NotificationsService, type NotificationView } from './notifications.service.js';
import { OptionalField } from '../../common/validation/fields.js';

class NotificationsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ description: 'Only unread notifications' })
  @OptionalField()
  @Transform(({ value }: { value: unknown }) =>
    value === 'true' ? true : value === 'false' ? false : value,
  )
  @IsBoolean()
  unread?: boolean;
}

class NotificationDto {
  @ApiProperty({ example: 'ntf_01jd3x000000000000abcd' }) id: string;
  @ApiProperty({ example: 'WEBHOOK_SUSPENDED' }) type: string;
  @ApiProperty() title: string;
  @ApiProperty() body: string;
  @ApiProperty({ type: 'object', additionalProperties: true }) data: Record<string, unknown>;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true }) read_at: string | null;
}

class NotificationPageDto {
  @ApiProperty({ type: [NotificationDto] }) data: NotificationDto[];
  @ApiProperty({ type: 'string', nullable: true }) next_cursor: string | null;
}

@ApiTags('Notifications')
@Controller('notifications')
export class NotificationsController {
  constructor(private readonly notifications: NotificationsService) {}

  @Get('cursor')
  @Endpoint({
    summary: 'In-app notifications, newest first (keyset cursor, stable under new arrivals)',
    auth: 'key',
    scopes: ['notifications:read'],
    type: NotificationPageDto,
    errors: [400],
  })
  cursor(@Cred() c: Credential, @Query() q: NotificationsQueryDto): NotificationPageDto {
    return this.notifications.list(c.userId, q);
  }

  @Get()
  @Endpoint({
    summary: 'In-app notifications (deprecated: use /notifications/cursor)',
    description:
      'Deprecated on 2026-05-08, no sunset scheduled. Answers exactly what GET /api/v1/notifications/cursor answers, with Deprecation and Link (successor-version) headers.',
    auth: 'key',
    scopes: ['notifications:read'],
    lifecycle: {
      state: 'DEPRECATED',
      deprecatedOn: '2026-05-08',
      successor: '/api/v1/notifications/cursor',
    },
    type: NotificationPageDto,
    errors: [400],
  })
  legacy(@Cred() c: Credential, @Query() q: NotificationsQueryDto): NotificationPageDto {
    return this.notifications.list(c.userId, q);
  }

  @Post(':id/read')
  @Endpoint({
    summary: 'Mark a notification read',
    auth: 'key',
    scopes: ['notifications:write'],
    status: 200,
    type: NotificationDto,
    errors: [404],
  })
  read(@Cred() c: Credential, @Param('id') id: string): NotificationView {
    return this.notifications.read(c.userId, id);
  }
}
