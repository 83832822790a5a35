import { Body, Controller, Delete, Get, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBody, ApiTags } from '@nestjs/swagger';
import { Endpoint } from '../../common/api/endpoint.decorator.js';
import { Cred } from '../../common/http/credential.decorator.js';
import type { Credential } from '../../common/http/request-context.js';
import { PageQueryDto } from '../../common/pagination/page-query.dto.js';
import {
  CreatedWebhookDto,
  CreateWebhookDto,
  DeliveriesQueryDto,
  DeliveryDto,
  DeliveryPageDto,
  HealthDto,
  RotatedWebhookDto,
  RotateSecretDto,
  TestEventDto,
  UpdateWebhookDto,
  WebhookEndpointDto,
  WebhookPageDto,
} from './webhooks.dto.js';
import { WebhooksService } from './webhooks.service.js';

const SIGNING =
  'Deliveries are POSTs with Svc-Webhook-Signature: t=<unix>,v1=<hex>[,v1=<hex>] (HMAC-SHA256 of "<t>.<raw body>" per live secret; the Stripe scheme), Svc-Webhook-Secret-Version (the active version), Svc-Webhook-Id (delivery id) and Svc-Webhook-Event. A 2xx within 10 s succeeds; anything else, 3xx included, is retried on WEBHOOK_RETRY_SCHEDULE and dead-lettered after the last attempt.';

/** Answers about a well-formed url's target (its shape is the request schema's pattern, else 400). */
const URL_REFUSALS = [
  'WEBHOOK_URL_NOT_ALLOWED (details.host): loopback, private, link-local, CGNAT or metadata target',
  'WEBHOOK_HOST_UNRESOLVED (details.host): the host name does not resolve',
];

@ApiTags('Webhooks')
@Controller('webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post()
  @Endpoint({
    summary: 'Register a webhook endpoint (the secret is returned once)',
    description: `The endpoint belongs to the calling key's environment and receives only its events. Caps: FREE 3, PRO 10, ENTERPRISE 25 (highest tier among your active keys; ACTIVE and SUSPENDED count). ${SIGNING}`,
    auth: 'key',
    scopes: ['webhooks:write'],
    status: 201,
    type: CreatedWebhookDto,
    errors: [400, 422],
    codes: {
      422: [...URL_REFUSALS, 'WEBHOOK_ENDPOINT_CAP_REACHED (details cap, current_count, tier)'],
    },
  })
  create(@Cred() c: Credential, @Body() body: CreateWebhookDto): Promise<CreatedWebhookDto> {
    return this.webhooks.create(c, body);
  }

  @Get()
  @Endpoint({
    summary: 'List your webhook endpoints with their health summary',
    auth: 'key',
    scopes: ['webhooks:read'],
    type: WebhookPageDto,
    errors: [400],
  })
  list(@Cred() c: Credential, @Query() q: PageQueryDto): WebhookPageDto {
    return this.webhooks.list(c, q);
  }

  @Get(':id')
  @Endpoint({
    summary: 'Get a webhook endpoint',
    auth: 'key',
    scopes: ['webhooks:read'],
    type: WebhookEndpointDto,
    errors: [404],
  })
  get(@Cred() c: Credential, @Param('id') id: string): WebhookEndpointDto {
    return this.webhooks.get(c, id);
  }

  @Patch(':id')
  @Endpoint({
    summary: 'Update url, events or description',
    auth: 'key',
    scopes: ['webhooks:write'],
    type: WebhookEndpointDto,
    errors: [400, 404, 409, 422],
    codes: { 422: URL_REFUSALS },
  })
  update(
    @Cred() c: Credential,
    @Param('id') id: string,
    @Body() body: UpdateWebhookDto,
  ): Promise<WebhookEndpointDto> {
    return this.webhooks.update(c, id, body);
  }

  @Delete(':id')
  @Endpoint({
    summary: 'Disable an endpoint (terminal): queued deliveries are cancelled',
    auth: 'key',
    scopes: ['webhooks:write'],
    type: WebhookEndpointDto,
    errors: [404],
  })
  disable(@Cred() c: Credential, @Param('id') id: string): WebhookEndpointDto {
    return this.webhooks.disable(c, id);
  }

  // The body is optional (CONTRACT: {grace_hours?}); without it the default grace applies.
  @ApiBody({ type: RotateSecretDto, required: false })
  @Post(':id/rotate-secret')
  @Endpoint({
    summary:
      'Rotate the signing secret (new secret returned once; the old one co-signs during the grace window)',
    description:
      'The retired secret keeps co-signing (a second v1= candidate) for grace_hours, at most WEBHOOK_SECRET_GRACE_HOURS (default 24, never more than 72). Rotating again during a grace window ends the earlier one: only the most recently retired secret co-signs.',
    auth: 'key',
    scopes: ['webhooks:write'],
    status: 200,
    type: RotatedWebhookDto,
    errors: [400, 404, 409],
  })
  rotate(
    @Cred() c: Credential,
    @Param('id') id: string,
    @Body() body: RotateSecretDto,
  ): RotatedWebhookDto {
    return this.webhooks.rotate(c, id, body.grace_hours);
  }

  @Post(':id/reactivate')
  @Endpoint({
    summary: 'Reactivate a SUSPENDED endpoint; held deliveries resume',
    auth: 'key',
    scopes: ['webhooks:write'],
    status: 200,
    type: WebhookEndpointDto,
    errors: [404, 409],
    codes: { 409: ['WEBHOOK_NOT_SUSPENDED (the endpoint is not SUSPENDED)'] },
  })
  reactivate(@Cred() c: Credential, @Param('id') id: string): WebhookEndpointDto {
    return this.webhooks.reactivate(c, id);
  }

  @Get(':id/health')
  @Endpoint({
    summary: 'Health of an endpoint (replays excluded from rates and the failure streak)',
    auth: 'key',
    scopes: ['webhooks:read'],
    type: HealthDto,
    errors: [404],
  })
  health(@Cred() c: Credential, @Param('id') id: string): HealthDto {
    return this.webhooks.health(c, id);
  }

  @Get(':id/deliveries')
  @Endpoint({
    summary: 'Delivery log, newest first',
    auth: 'key',
    scopes: ['webhooks:read'],
    type: DeliveryPageDto,
    errors: [400, 404],
  })
  deliveries(
    @Cred() c: Credential,
    @Param('id') id: string,
    @Query() q: DeliveriesQueryDto,
  ): DeliveryPageDto {
    return this.webhooks.deliveries(c, id, q);
  }

  @Post(':id/deliveries/:deliveryId/replay')
  @Endpoint({
    summary: 'Replay a dead-lettered delivery (a new delivery of the same event)',
    auth: 'key',
    scopes: ['webhooks:write'],
    status: 202,
    type: DeliveryDto,
    errors: [404, 409],
    codes: { 409: ['DELIVERY_NOT_DEAD_LETTERED (only a dead-lettered delivery is replayed)'] },
  })
  replay(
    @Cred() c: Credential,
    @Param('id') id: string,
    @Param('deliveryId') deliveryId: string,
  ): DeliveryDto {
    return this.webhooks.replay(c, id, deliveryId);
  }

  // The body is optional: without it (or without type) a webhook.test event is sent.
  @ApiBody({ type: TestEventDto, required: false })
  @Post(':id/test')
  @Endpoint({
    summary: 'Send a sample event (webhook.test by default, or any documented type)',
    description:
      "Sends a sample of the given event type, as an ordinary delivery (signed, retried, logged), whether or not the endpoint subscribes to that type. The samples are realistic values in the documented schemas (see the document's webhooks), with fresh ids. Types other than webhook.test go to test endpoints only: on a live endpoint they answer 403 LIVE_KEY_SANDBOX_ENDPOINT.",
    auth: 'key',
    scopes: ['webhooks:write'],
    status: 202,
    type: DeliveryDto,
    errors: [400, 403, 404, 409],
    codes: {
      403: ['LIVE_KEY_SANDBOX_ENDPOINT (a sample other than webhook.test for a live endpoint)'],
      409: ['WEBHOOK_DISABLED (the endpoint is DISABLED)'],
    },
  })
  test(@Cred() c: Credential, @Param('id') id: string, @Body() body: TestEventDto): DeliveryDto {
    return this.webhooks.test(c, id, body?.type);
  }
}
