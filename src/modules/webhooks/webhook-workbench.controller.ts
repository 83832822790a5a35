import { Body, Controller, Delete, Get, Param, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Endpoint } from '../../common/api/endpoint.decorator.js';
import { Cred } from '../../common/http/credential.decorator.js';
import type { Credential } from '../../common/http/request-context.js';
import {
  DeliveryDetailDto,
  SimulatedFailuresDto,
  SimulateFailuresDto,
} from './webhook-workbench.dto.js';
import {
  WebhookWorkbenchService,
  type AttemptView,
  type SimulatedFailuresView,
} from './webhook-workbench.service.js';
import type { DeliveryView } from './webhooks.service.js';

// The sandbox-only note (test keys only, 403 otherwise) opens each description: @Endpoint adds it.
const TEST_ONLY = 'Test endpoints only (a live endpoint is reachable only with a live key).';

@ApiTags('Webhooks')
@Controller('webhooks')
export class WebhookWorkbenchController {
  constructor(private readonly workbench: WebhookWorkbenchService) {}

  @Post(':id/simulate-failures')
  @Endpoint({
    summary: 'Make the next attempts to a test endpoint fail, without contacting the receiver',
    description: `The endpoint's next count attempts (originals, retries and replays alike) fail as mode says, as if the receiver had: HTTP_500 records response_status 500 and "HTTP 500", TIMEOUT "no response within <WEBHOOK_TIMEOUT_MS> ms", CONNECTION_REFUSED "connect ECONNREFUSED <host>:<port>". No request is sent. Retries, dead letters, health, automatic suspension and replay follow exactly as for a real failing receiver; the attempt log marks each such attempt simulated: true. A second call replaces the pending count and mode (it does not add); DELETE clears them. The count survives a restart. ${TEST_ONLY}`,
    auth: 'key',
    scopes: ['webhooks:write'],
    environment: 'sandbox-only',
    status: 200,
    type: SimulatedFailuresDto,
    errors: [400, 403, 404, 409],
    codes: {
      403: ['LIVE_KEY_SANDBOX_ENDPOINT (a live key: live endpoints take no simulated failures)'],
      409: ['WEBHOOK_DISABLED (the endpoint is DISABLED)'],
    },
  })
  simulate(
    @Cred() c: Credential,
    @Param('id') id: string,
    @Body() body: SimulateFailuresDto,
  ): SimulatedFailuresView {
    return this.workbench.simulateFailures(c, id, body);
  }

  @Get(':id/simulate-failures')
  @Endpoint({
    summary: 'The simulated failures still pending on a test endpoint',
    description: TEST_ONLY,
    auth: 'key',
    scopes: ['webhooks:read'],
    environment: 'sandbox-only',
    type: SimulatedFailuresDto,
    errors: [403, 404],
    codes: { 403: ['LIVE_KEY_SANDBOX_ENDPOINT (a live key)'] },
  })
  pending(@Cred() c: Credential, @Param('id') id: string): SimulatedFailuresView {
    return this.workbench.simulatedFailures(c, id);
  }

  @Delete(':id/simulate-failures')
  @Endpoint({
    summary: 'Clear the simulated failures still pending on a test endpoint',
    description: `The next attempt reaches the receiver again. ${TEST_ONLY}`,
    auth: 'key',
    scopes: ['webhooks:write'],
    environment: 'sandbox-only',
    type: SimulatedFailuresDto,
    errors: [403, 404],
    codes: { 403: ['LIVE_KEY_SANDBOX_ENDPOINT (a live key)'] },
  })
  clear(@Cred() c: Credential, @Param('id') id: string): SimulatedFailuresView {
    return this.workbench.clearSimulatedFailures(c, id);
  }

  @Get(':id/deliveries/:deliveryId')
  @Endpoint({
    summary: 'A delivery with its attempt log',
    description:
      'Each attempt, oldest first: the request as sent (method, URL, headers with the signature, body), the response status and the first 4 KiB of the response body (null when no answer came), the duration, the outcome and the error. Secrets are never shown.',
    auth: 'key',
    scopes: ['webhooks:read'],
    type: DeliveryDetailDto,
    errors: [404],
  })
  delivery(
    @Cred() c: Credential,
    @Param('id') id: string,
    @Param('deliveryId') deliveryId: string,
  ): DeliveryView & { attempt_log: AttemptView[] } {
    return this.workbench.delivery(c, id, deliveryId);
  }
}
