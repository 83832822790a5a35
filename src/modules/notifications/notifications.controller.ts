import { Body, Controller, Get, Param, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Endpoint } from '../../common/api/endpoint.decorator.js';
import type { WorldName } from '../../common/environment.js';
import { Cred } from '../../common/http/credential.decorator.js';
import type { Credential } from '../../common/http/request-context.js';
import { World } from '../worlds/world.decorator.js';
import {
  NotificationDto,
  NotificationPageDto,
  NotificationsQueryDto,
  ReadAllNotificationsDto,
  ReadAllResultDto,
  UnreadCountDto,
} from './notifications.dto.js';
import { NotificationsService } from './notifications.service.js';

/** Every notification operation reads and writes the caller's world only. */
const WORLD_TEXT =
  'Notifications belong to a world: a test key (or an env:paper key) sees the paper world, a world key (POST /sandbox/worlds) its ephemeral world, a live key or a session the live world, and nothing of the others.';

@ApiTags('Notifications')
@Controller('notifications')
export class NotificationsController {
  constructor(private readonly notifications: NotificationsService) {}

  @Get('cursor')
  @Endpoint({
    summary: 'In-app notifications, newest first (keyset cursor, stable under new arrivals)',
    description: `${WORLD_TEXT} A cursor belongs to the world that issued it (another world's is 400 VALIDATION_FAILED).`,
    auth: 'key',
    scopes: ['notifications:read'],
    type: NotificationPageDto,
    errors: [400],
  })
  cursor(
    @Cred() c: Credential,
    @World() world: WorldName,
    @Query() q: NotificationsQueryDto,
  ): NotificationPageDto {
    return this.notifications.list(c.userId, world, q);
  }

  @Get()
  @Endpoint({
    summary: 'In-app notifications (deprecated: use /notifications/cursor)',
    description: `Deprecated on 2026-05-08, no sunset scheduled. Answers exactly what GET /api/v1/notifications/cursor answers, with Deprecation and Link (successor-version) headers. ${WORLD_TEXT}`,
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
  legacy(
    @Cred() c: Credential,
    @World() world: WorldName,
    @Query() q: NotificationsQueryDto,
  ): NotificationPageDto {
    return this.notifications.list(c.userId, world, q);
  }

  @Get('unread-count')
  @Endpoint({
    summary: 'How many of your notifications are unread',
    description: WORLD_TEXT,
    auth: 'key',
    scopes: ['notifications:read'],
    type: UnreadCountDto,
  })
  unreadCount(@Cred() c: Credential, @World() world: WorldName): UnreadCountDto {
    return this.notifications.unreadCount(c.userId, world);
  }

  @Post('read-all')
  @Endpoint({
    summary: 'Mark all your notifications read (optionally those created up to an instant)',
    description: `Marks your unread notifications created at or before \`before\` (inclusive), or all of them without it, and answers how many it marked; already read ones keep their read_at, so a second call marks 0. The body may be omitted. ${WORLD_TEXT}`,
    auth: 'key',
    scopes: ['notifications:write'],
    status: 200,
    type: ReadAllResultDto,
    errors: [400],
  })
  readAll(
    @Cred() c: Credential,
    @World() world: WorldName,
    @Body() body: ReadAllNotificationsDto,
  ): ReadAllResultDto {
    return this.notifications.readAll(c.userId, world, body.before);
  }

  @Post(':id/read')
  @Endpoint({
    summary: 'Mark a notification read',
    description: `Sets read_at once (a second call answers the same read_at). An id of another user or of the other world is 404 NOT_FOUND (details.notification_id). ${WORLD_TEXT}`,
    auth: 'key',
    scopes: ['notifications:write'],
    status: 200,
    type: NotificationDto,
    errors: [404],
  })
  read(@Cred() c: Credential, @World() world: WorldName, @Param('id') id: string): NotificationDto {
    return this.notifications.read(c.userId, world, id);
  }
}
