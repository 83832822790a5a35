import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { Environment } from '../../common/environment.js';

/**
 * Handler parameter: the world the request reads and writes. The access pipeline's environment
 * routing sets it once: a test key (or any key holding env:paper) is the paper world (`test`), a
 * live key or a session the live world, and a request without a credential reads the live world.
 * Every record a group creates (comments, watchlists, notifications, RFQs, exports, created
 * markets) is stored in and read from this world only, so no module decides it again.
 */
export const World = createParamDecorator(
  (_data: unknown, ctx: ExecutionContext): Environment =>
    ctx.switchToHttp().getRequest<FastifyRequest>().svc.environment,
);
