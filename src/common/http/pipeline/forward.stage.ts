import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RequestContext } from '../request-context.js';

/** The header carrying a replayed request's one-time token on the writer (never from a client). */
export const FORWARDED_HEADER = 'x-svc-forwarded';

/** A world-bound request as it travels to its world's writer (cluster mode). */
export interface ForwardedRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | null;
  /** What the receiving instance's pipeline resolved: credential, world, idempotency, scenario. */
  svc: RequestContext;
  requestId: string;
}

/** The writer's answer, sent to the client as if served by the receiving instance. */
export interface ForwardedAnswer {
  status: number;
  headers: Record<string, string | string[]>;
  body: string;
  /**
   * An ephemeral world's clock offset on the writer once it answered (ms ahead of the service
   * clock): the receiving instance's clock of the world follows it before the answer goes out.
   */
  clockOffsetMs?: number;
}

/** What the stages need of the cluster module (src/modules/cluster/cluster.service.ts). */
export interface ClusterGate {
  /** The writer's answer, or null when this instance serves the world itself now. */
  forward(world: string, request: ForwardedRequest): Promise<ForwardedAnswer | null>;
  /** The context a replay token stands for (once), when this process issued it. */
  trusted(token: string): RequestContext | undefined;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** A request the writer replays for another instance: already authenticated and charged. */
    svcForwarded: boolean;
  }
}

/** Headers a client's request keeps on its way to the writer (hop-by-hop and framing go). */
const DROPPED_REQUEST = new Set([
  'host',
  'connection',
  'keep-alive',
  'content-length',
  'transfer-encoding',
  'expect',
  'upgrade',
  'idempotency-key', // begun (and finished) by the receiving instance
  FORWARDED_HEADER,
]);

/** Headers of the writer's answer the receiving instance sets itself. */
const DROPPED_ANSWER = new Set([
  'content-length',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'date',
  'x-request-id',
]);

/**
 * onRequest, the writer's side: a request replayed by this process's cluster inbox carries a
 * one-time token this process issued; its context is trusted instead of authenticating again,
 * and no limit is charged again (the receiving instance did both). A client cannot guess a token.
 */
export function trustForwarded(req: FastifyRequest, cluster: ClusterGate): boolean {
  const token = req.headers[FORWARDED_HEADER];
  if (typeof token !== 'string') return false;
  const svc = cluster.trusted(token);
  if (svc === undefined) return false;
  req.svc = svc;
  req.svcForwarded = true;
  return true;
}

/**
 * preHandler, the last stage, cluster mode only: a world-bound request on an instance that is
 * not its world's writer is sent whole to the writer, after every stage that runs here (limits,
 * credential, idempotency, scenarios); the writer's answer goes to the client as if served here.
 * Undefined, or a promise of false: served here; true: answered with the writer's answer.
 */
export function forwardToWriter(
  req: FastifyRequest,
  reply: FastifyReply,
  cluster: ClusterGate,
): Promise<boolean> | undefined {
  if (req.svcForwarded || reply.sent) return undefined;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || DROPPED_REQUEST.has(name)) continue;
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  const raw = req.rawBody;
  const body =
    raw !== undefined && raw !== null
      ? raw.toString('utf8')
      : req.body === undefined || req.body === null
        ? null
        : JSON.stringify(req.body);
  const request: ForwardedRequest = {
    method: req.method,
    url: req.url,
    headers,
    body,
    svc: req.svc,
    requestId: String(req.id),
  };
  return cluster.forward(req.svc.world, request).then((answer) => {
    if (answer === null) return false;
    for (const [name, value] of Object.entries(answer.headers)) {
      if (!DROPPED_ANSWER.has(name)) void reply.header(name, value);
    }
    void reply.code(answer.status).send(answer.body);
    return true;
  });
}
