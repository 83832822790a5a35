import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';

/** onResponse: one structured log line per request. */
export function logRequest(log: Logger, req: FastifyRequest, reply: FastifyReply): void {
  log.info(
    {
      req_id: req.id,
      method: req.method,
      route: req.routeOptions?.url ?? null,
      status: reply.statusCode,
      duration_ms: Math.round(reply.elapsedTime * 100) / 100,
    },
    'request',
  );
}
