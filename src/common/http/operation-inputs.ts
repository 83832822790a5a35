/**
 * What each documented operation takes besides its path, read from the OpenAPI document, and the
 * checks that refuse what it does not take (unknown query parameters, a body it has no use for).
 */
import type { FastifyRequest } from 'fastify';
import { validationFailed } from '../errors/domain-error.js';
/** What a documented operation takes besides its path: its query parameters and whether a body. */
export interface OperationInputs {
  query: ReadonlySet<string>;
  body: boolean;
}

/**
 * The inputs of every documented operation, from the OpenAPI document itself, keyed as Fastify
 * names the route (`GET /api/v1/markets/:id/orderbook`): a query parameter the document does not
 * list, or a body sent to an operation that takes none, is refused on every operation that takes
 * a credential alike, rather than ignored (`GET /orders/export?status=OPEN` would otherwise look
 * like a filter that worked). The public reads (health, the documents, the changelog) are left
 * alone: cache-busters and tracking parameters on them harm no one.
 */
export function operationsOf(doc: Record<string, unknown>): Map<string, OperationInputs> {
  const out = new Map<string, OperationInputs>();
  const paths = (doc.paths ?? {}) as Record<string, Record<string, unknown>>;
  for (const [path, ops] of Object.entries(paths)) {
    const route = path.replace(/\{([^}]+)\}/g, ':$1');
    for (const [method, op] of Object.entries(ops)) {
      if (op === null || typeof op !== 'object') continue;
      const { parameters, requestBody } = op as { parameters?: unknown[]; requestBody?: unknown };
      const params = (parameters ?? []) as { in?: string; name?: string }[];
      out.set(`${method.toUpperCase()} ${route}`, {
        query: new Set(params.filter((p) => p.in === 'query').map((p) => String(p.name))),
        body: requestBody !== undefined,
      });
    }
  }
  return out;
}

/**
 * 400 VALIDATION_FAILED for a body sent to an operation that takes none, in the pipe's words.
 * An empty object and a JSON `null`, which many clients send with every POST or DELETE (Go's
 * json.Marshal(nil), .NET's JsonContent.Create(null)), are no body, as on the operations that
 * take an optional one (cancel-all).
 */
export function checkNoBody(req: FastifyRequest, op: OperationInputs): void {
  const body = req.body;
  if (body === undefined || body === null || op.body) return;
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
    const keys = Object.keys(body);
    if (keys.length === 0) return;
    throw validationFailed(
      keys.map((k) => ({ field: k, message: `property ${k} should not exist` })),
    );
  }
  throw validationFailed([
    { field: 'body', message: 'body must be absent: this operation takes none' },
  ]);
}

/**
 * The operation a request reached, as `METHOD /route/:param`. HEAD is GET without the body
 * (Fastify adds it to every GET): one operation, one route budget, the same query parameters.
 */
export function operationKey(req: FastifyRequest): string {
  return `${req.method === 'HEAD' ? 'GET' : req.method} ${req.routeOptions.url}`;
}

/** 400 VALIDATION_FAILED for query parameters the operation does not take, in the pipe's words. */
export function checkQueryNames(req: FastifyRequest, op: OperationInputs): void {
  const query = req.query as Record<string, unknown> | undefined;
  if (query === undefined || query === null) return;
  const keys = Object.keys(query);
  if (keys.length === 0) return;
  const allowed = op.query;
  // `/markets/?limit=1` reaches `/markets/:id` with an empty id: the handler's 404 says it best.
  const params = req.params as Record<string, unknown> | undefined;
  if (params !== undefined && Object.values(params).some((v) => v === '')) return;
  // No operation takes a list in its query: a parameter given twice is named as such, rather
  // than judged as the array the parser made of it ("must be an integer number").
  const problems = keys.flatMap((k) =>
    !allowed.has(k)
      ? [
          k === ''
            ? { field: k, message: 'a query parameter must have a name' }
            : { field: k, message: `property ${k} should not exist` },
        ]
      : Array.isArray(query[k])
        ? [{ field: k, message: `${k} must be given at most once` }]
        : // `?limit=` is neither absent nor a value: refused, as the document says (minLength 1).
          query[k] === ''
          ? [{ field: k, message: `${k} must not be empty` }]
          : [],
  );
  if (problems.length > 0) throw validationFailed(problems);
}
