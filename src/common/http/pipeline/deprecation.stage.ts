import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  deprecationHeaders,
  isSunset,
  successorPath,
  type Lifecycle,
} from '../../api/lifecycle.js';
import type { RouteMeta } from '../../api/route-meta.js';
import type { Clock } from '../../clock/clock.js';
import { DomainError } from '../../errors/domain-error.js';

/** The route's lifecycle when it is deprecated (only those routes run these stages). */
export function deprecatedLifecycle(meta: RouteMeta | undefined): Lifecycle | null {
  return meta !== undefined && meta.lifecycle.state === 'DEPRECATED' ? meta.lifecycle : null;
}

function paramsOf(req: FastifyRequest): Record<string, string | undefined> {
  return (req.params ?? {}) as Record<string, string | undefined>;
}

/** Deprecation headers go on every answer of a deprecated operation, refusals included. */
export function markDeprecated(req: FastifyRequest, reply: FastifyReply, lc: Lifecycle): void {
  for (const [k, v] of Object.entries(deprecationHeaders(lc, paramsOf(req)))) {
    reply.header(k, v);
  }
}

/** 410 SUNSET once a deprecated operation passed its sunset (counted per IP first). */
export function refuseAfterSunset(req: FastifyRequest, lc: Lifecycle, clock: Clock): void {
  if (!isSunset(lc, clock.now())) return;
  const link = successorPath(lc, paramsOf(req));
  throw new DomainError(
    'SUNSET',
    `This operation passed its sunset on ${lc.sunsetOn}` +
      (link !== undefined ? `; use ${link}` : ''),
    { sunset: lc.sunsetOn, successor: link ?? null },
    link !== undefined ? { Link: `<${link}>; rel="successor-version"` } : {},
  );
}
