import type { FastifyRequest } from 'fastify';
import type { RouteMeta } from '../../api/route-meta.js';
import type { AccessPipeline } from '../../../modules/access/access.pipeline.js';

/**
 * preValidation: who is calling, in SPEC order — credential, key state (key-state.stage.ts),
 * signature (signature.stage.ts), environment routing (environment.stage.ts), scope
 * (scope.stage.ts) — composed by AccessPipeline, which the realtime feed's auth message shares.
 * Fills `req.svc` or throws; a promise only when it waits (a key read, a signature's replay check).
 */
export function credential(
  req: FastifyRequest,
  meta: RouteMeta,
  access: AccessPipeline | null,
): Promise<void> | void {
  // A cached key that needs no signature is decided at once (no promise): see authenticate.
  if (access !== null) return access.authenticate(req, meta);
}
