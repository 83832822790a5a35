import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { WorldName } from '../../common/environment.js';

/**
 * Handler parameter: the world the request reads and writes. The access pipeline's environment
 * routing sets it once: a test key (or any key holding env:paper) is the paper world (`test`), a
 * live key or a session the live world, and a request without a credential reads the live world.
 * Every record a group creates (comments, watchlists, notifications, RFQs, exports, created
 * markets) is stored in and read from this world only, so no module decides it again. A world
 * key's requests are in its ephemeral world (`wld_...`), which serves like the paper world.
 */
export const World = createParamDecorator(worldOfRequest);

/** @World()'s factory (named: cluster mode tells world-bound routes by it, world-bound.ts). */
export function worldOfRequest(_data: unknown, ctx: ExecutionContext): WorldName {
  return ctx.switchToHttp().getRequest<FastifyRequest>().svc.world;
}
