import { Controller, Get } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Endpoint } from '../../common/api/endpoint.decorator.js';
import { ConfigService } from '../../config/config.service.js';
import { buildAsyncApi } from './asyncapi.js';

@ApiTags('Meta')
@Controller('asyncapi.json')
export class AsyncApiController {
  private readonly doc: Record<string, unknown>;

  constructor(config: ConfigService) {
    this.doc = buildAsyncApi(config.values.stagingBaseUrl);
  }

  @Get()
  @Endpoint({
    summary: 'AsyncAPI 3.0 description of the realtime WebSocket feed (/api/v1/ws)',
    auth: 'public',
    schema: {
      type: 'object',
      additionalProperties: true,
      description: 'An AsyncAPI 3.0.0 document',
    },
  })
  get(): Record<string, unknown> {
    return this.doc;
  }
}
