import { Readable } from 'node:stream';
import { Controller, Get, Headers, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Endpoint } from '../../common/api/endpoint.decorator.js';
import { ConfigService } from '../../config/config.service.js';
import { CHANGELOG, changelogRss } from './changelog.js';
import { OpenApiService } from './openapi.service.js';

const OPENAPI_SCHEMA = {
  type: 'object',
  description: 'The OpenAPI 3.1.0 document of this API',
  additionalProperties: true,
};

@ApiTags('Meta')
@Controller()
export class MetaController {
  constructor(
    private readonly openapi: OpenApiService,
    private readonly config: ConfigService,
  ) {}

  @Get('openapi/v1.json')
  @Endpoint({
    summary: 'The pinned OpenAPI 3.1 contract (v1)',
    description: 'Strong ETag; send If-None-Match to get 304 Not Modified when unchanged.',
    auth: 'public',
    schema: OPENAPI_SCHEMA,
    otherResponses: [{ status: 304, description: 'Not modified (If-None-Match matched)' }],
  })
  pinned(@Headers('if-none-match') inm: string | undefined, @Res() reply: FastifyReply): void {
    this.sendContract(inm, reply);
  }

  @Get('openapi.json')
  @Endpoint({
    summary: 'The versioned OpenAPI contract URL (successor of the legacy /openapi.json)',
    description: 'Same document and ETag as /api/v1/openapi/v1.json.',
    auth: 'public',
    schema: OPENAPI_SCHEMA,
    otherResponses: [{ status: 304, description: 'Not modified (If-None-Match matched)' }],
  })
  versioned(@Headers('if-none-match') inm: string | undefined, @Res() reply: FastifyReply): void {
    this.sendContract(inm, reply);
  }

  @Get('changelog')
  @Endpoint({
    summary: 'Dated changelog (JSON)',
    auth: 'public',
    schema: {
      type: 'object',
      properties: {
        data: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              id: { type: 'string' },
              date: { type: 'string', format: 'date' },
              title: { type: 'string' },
              kind: { type: 'string', enum: ['ADDED', 'CHANGED', 'DEPRECATED', 'REMOVED'] },
              description: { type: 'string' },
            },
            required: ['id', 'date', 'title', 'kind', 'description'],
          },
        },
        rss: { type: 'string', description: 'URL of the RSS 2.0 feed' },
      },
      required: ['data', 'rss'],
    },
  })
  changelog(): { data: typeof CHANGELOG; rss: string } {
    return { data: CHANGELOG, rss: '/api/v1/changelog.rss' };
  }

  @Get('changelog.rss')
  @Endpoint({
    summary: 'Dated changelog (RSS 2.0)',
    auth: 'public',
    responseDescription: 'An RSS 2.0 document (application/rss+xml)',
  })
  changelogRss(@Res() reply: FastifyReply): void {
    void reply
      .type('application/rss+xml; charset=utf-8')
      .send(changelogRss(this.config.values.stagingBaseUrl));
  }

  private sendContract(inm: string | undefined, reply: FastifyReply): void {
    reply.header('ETag', this.openapi.etag).header('Cache-Control', 'no-cache');
    if (this.openapi.matches(inm)) {
      // A 304 has no Content-Length but the 200's (RFC 9110 8.6); Fastify's HEAD handling writes
      // 0 for an absent body, and leaves a (finished) stream's answer without one.
      void reply.code(304).send(reply.request.method === 'HEAD' ? Readable.from([]) : undefined);
      return;
    }
    void reply.type('application/json; charset=utf-8').send(this.openapi.body);
  }
}
