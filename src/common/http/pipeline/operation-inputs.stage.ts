import type { FastifyRequest } from 'fastify';
import type { RouteMeta } from '../../api/route-meta.js';
import { checkNoBody, checkQueryNames, type OperationInputs } from '../operation-inputs.js';

/**
 * Whether a route's query names and body are checked against its OpenAPI entry. The public reads
 * (the documents, the changelog, the health probe) tolerate cache-busters; every other
 * operation, the public POSTs (register, login, ...) included, takes only what its entry lists.
 */
export function checksInputs(meta: RouteMeta | undefined, method: string): boolean {
  return meta !== undefined && !(meta.auth === 'public' && (method === 'GET' || method === 'HEAD'));
}

/** preValidation: 400 for a query parameter the operation does not list, or an unwanted body. */
export function operationInputs(
  req: FastifyRequest,
  operation: string,
  operations: ReadonlyMap<string, OperationInputs> | null,
): void {
  const op = operations?.get(operation);
  if (op === undefined) return;
  checkQueryNames(req, op);
  checkNoBody(req, op);
}
