import type { FastifyRequest } from 'fastify';
import { hasNoBody } from '../json-body.js';

/**
 * onRequest: a request without a body has nothing to parse, whatever media type it names (fetch
 * sends text/plain with body '', SDKs application/json on every call): no 415, no "empty JSON".
 */
export function dropTypeOfEmptyBody(req: FastifyRequest): void {
  if (req.headers['content-type'] !== undefined && hasNoBody(req.headers)) {
    delete req.headers['content-type'];
  }
}

/**
 * preValidation, once the caller is known: what the body parser found wrong with a field
 * (json-body.ts), so an anonymous or over-limit caller learns that first.
 */
export function raiseBodyIssue(req: FastifyRequest): void {
  if (req.bodyIssue !== undefined) throw req.bodyIssue;
}
