import { Catch, NotFoundException, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { DomainError } from '../errors/domain-error.js';
import { mapError } from '../errors/error-mapper.js';
import { methodNotAllowed, routerPath, type RouteRegistry } from './route-registry.js';

/**
 * Every error of every request ends here (Nest routes, Fastify's parser errors, the not-found
 * handler, hooks), and leaves as the contract's error body.
 */
@Catch()
export class ErrorFilter implements ExceptionFilter {
  constructor(
    private readonly routes: RouteRegistry,
    private readonly log: Logger,
  ) {}

  catch(err: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const req = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    this.send(this.classify(err, req), req, reply);
  }

  private classify(err: unknown, req: FastifyRequest): unknown {
    // Nest's router reports an unmatched route as NotFoundException; a known path with another
    // method is 405, not 404.
    if (err instanceof NotFoundException) {
      const path = routerPath(req.url.split('?')[0]);
      const allowed = this.routes.methodsFor(path);
      // HEAD is GET without the body (Fastify adds it to every GET route): answered as GET is.
      const method = req.method === 'HEAD' ? 'GET' : req.method;
      if (allowed.length > 0 && !allowed.includes(method)) {
        return methodNotAllowed(req.method, path, allowed);
      }
      return new DomainError('NOT_FOUND', `No route ${req.method} ${path}`);
    }
    return err;
  }

  private send(err: unknown, req: FastifyRequest, reply: FastifyReply): void {
    const mapped = mapError(err, String(req.id));
    if (mapped.unexpected) {
      this.log.error(
        { req_id: req.id, method: req.method, route: req.routeOptions?.url, err },
        'unexpected error',
      );
    }
    if (reply.sent) return;
    for (const [k, v] of Object.entries(mapped.headers)) reply.header(k, v);
    void reply
      .code(mapped.status)
      .type('application/json; charset=utf-8')
      .send(JSON.stringify(mapped.body));
  }
}
