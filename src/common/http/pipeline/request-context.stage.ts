import type { FastifyReply, FastifyRequest } from 'fastify';
import { newRequestContext } from '../request-context.js';

/**
 * The request's context (`req.svc`, filled by the credential stage) and the headers every
 * answer carries: its id, the API version, and no-store. Answers carry keys, tokens, secrets
 * and account data: no cache keeps them (a GET sent with X-API-Key is not protected as one with
 * Authorization is, RFC 9111 3.5). The contract document sets its own (no-cache, with its ETag).
 */
export function startRequest(req: FastifyRequest, reply: FastifyReply): void {
  req.svc = newRequestContext();
  reply.header('X-Request-Id', req.id).header('Svc-API-Version', 'v1');
  reply.header('Cache-Control', 'no-store');
}
