import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { deprecationHeaders, type Lifecycle } from '../../common/api/lifecycle.js';
import { API_TAGS } from './tags.js';

type Obj = Record<string, unknown>;

export const LEGACY_OPENAPI_LIFECYCLE: Lifecycle = {
  state: 'DEPRECATED',
  deprecatedOn: '2026-05-08',
  sunsetOn: '2026-08-08',
  successor: '/api/v1/openapi.json',
};

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

const DESCRIPTION = `HTTP API of the paper-trading sandbox exchange.

* Test keys (\`svc_test_...\`) reach the isolated paper engine; live keys (\`svc_live_...\`) the live engine.
* Every operation lists the scopes it needs in \`x-required-scopes\` and in its security requirement,
  its lifecycle in \`x-lifecycle\` (STABLE, BETA, DEPRECATED) and, where one applies, its per-route limit in \`x-rate-limit\`.
* Errors share one body: \`{"error": {"code", "message", "status", "request_id", "details"}}\`.
* Money is integer cents; prices of binary contracts are integer cents 1..99.
* Every response carries \`Svc-API-Version: v1\` and \`X-Request-Id\`.
* Deprecated operations answer with \`Deprecation\` (@unix seconds), \`Sunset\` (when scheduled) and
  \`Link: <successor>; rel="successor-version"\`; past the sunset they answer 410 SUNSET.`;

/**
 * Generates the OpenAPI 3.1 document from the controllers' decorators, then derives the security
 * requirements from each operation's x-auth and x-required-scopes, so the scopes are stated once.
 */
export function buildOpenApi(app: INestApplication, stagingBaseUrl: string): Obj {
  const builder = new DocumentBuilder()
    .setOpenAPIVersion('3.1.0')
    .setTitle('Sandbox exchange API')
    .setDescription(DESCRIPTION)
    .setVersion('v1')
    .addServer(stagingBaseUrl, 'Staging (the only environment the API Explorer offers)')
    .addSecurity('ApiKeyAuth', {
      type: 'apiKey',
      in: 'header',
      name: 'X-API-Key',
      description: 'An API key: svc_live_... (live engine) or svc_test_... (paper engine)',
    })
    .addSecurity('BearerAuth', {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
      description:
        "First-party session token from POST /api/v1/auth/login (the service's own apps)",
    });
  for (const t of API_TAGS) builder.addTag(t.name, t.description);
  const doc = SwaggerModule.createDocument(app, builder.build(), {
    operationIdFactory: (controller, method) =>
      `${controller.replace(/Controller$/, '')}_${method}`.replace(/^./, (c) => c.toLowerCase()),
  }) as unknown as Obj;

  const paths = doc.paths as Record<string, Obj>;
  for (const item of Object.values(paths)) {
    for (const m of METHODS) {
      const op = item[m] as Obj | undefined;
      if (op !== undefined) op.security = securityFor(op);
    }
  }
  paths['/openapi.json'] = legacyOpenApiPath();
  (doc as Obj).tags = API_TAGS;
  // The WebSocket feed is described by AsyncAPI, not by a tag.
  (doc as Obj).externalDocs = {
    description: 'Realtime WebSocket feed (/api/v1/ws): AsyncAPI 3.0 document',
    url: `${stagingBaseUrl}/api/v1/asyncapi.json`,
  };
  ((doc as Obj).info as Obj)['x-asyncapi'] = '/api/v1/asyncapi.json';
  return doc;
}

function securityFor(op: Obj): Obj[] {
  const auth = op['x-auth'];
  const scopes = (op['x-required-scopes'] as string[] | undefined) ?? [];
  switch (auth) {
    case 'public':
      return [];
    case 'optional':
      return [{}, { ApiKeyAuth: scopes }, { BearerAuth: scopes }];
    case 'session':
      return [{ BearerAuth: scopes }];
    default:
      return [{ ApiKeyAuth: scopes }, { BearerAuth: scopes }];
  }
}

function legacyOpenApiPath(): Obj {
  const headers = deprecationHeaders(LEGACY_OPENAPI_LIFECYCLE);
  const headerDocs: Obj = {};
  for (const [name, example] of Object.entries(headers)) {
    headerDocs[name] = { schema: { type: 'string' }, example };
  }
  return {
    get: {
      operationId: 'legacyOpenApi',
      summary: 'Legacy contract URL (deprecated)',
      description:
        'Deprecated on 2026-05-08. Redirects (308) to /api/v1/openapi.json until its sunset on 2026-08-08; after that it answers 410 SUNSET. This path sits outside the /api/v1 prefix.',
      tags: ['Meta'],
      deprecated: true,
      security: [],
      'x-auth': 'public',
      'x-required-scopes': [],
      'x-lifecycle': 'DEPRECATED',
      'x-deprecation': {
        deprecated_on: LEGACY_OPENAPI_LIFECYCLE.deprecatedOn,
        sunset_on: LEGACY_OPENAPI_LIFECYCLE.sunsetOn,
        successor: LEGACY_OPENAPI_LIFECYCLE.successor,
      },
      responses: {
        '308': {
          description: 'Permanent redirect to /api/v1/openapi.json',
          headers: { Location: { schema: { type: 'string' } }, ...headerDocs },
        },
        '410': {
          description: 'Past the sunset (SUNSET)',
          headers: { Link: headerDocs['Link'] },
          content: {
            'application/json': { schema: { $ref: '#/components/schemas/ErrorResponseDto' } },
          },
        },
      },
    },
  };
}
