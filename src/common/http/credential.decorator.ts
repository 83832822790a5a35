import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { DomainError } from '../errors/domain-error.js';
import type { Credential } from './request-context.js';

/** The request's authenticated credential (the route's @Endpoint requires one). */
export function credentialOf(req: FastifyRequest): Credential {
  const c = req.svc.credential;
  if (c === null) throw new DomainError('UNAUTHENTICATED', 'A credential is required');
  return c;
}

/** Handler parameter: the authenticated credential (the route's @Endpoint requires one). */
export const Cred = createParamDecorator((_data: unknown, ctx: ExecutionContext): Credential =>
  credentialOf(ctx.switchToHttp().getRequest<FastifyRequest>()),
);
