import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyAdapter } from '@nestjs/platform-fastify';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Lifecycle } from './pipeline/pipeline-state.js';

/**
 * A graceful shutdown's first step: drain HTTP (after the webhook deliveries in flight: `first`). Nest (12) closes an application as: the HTTP
 * adapter's beforeClose, every module's onModuleDestroy, every beforeApplicationShutdown, the HTTP
 * server's close (NestApplication.dispose), then every onApplicationShutdown. The server closing
 * only after the destroy hooks, the requests in flight are waited for here, in beforeClose
 * (awaited by Nest), while the engines, their timers, the cluster writer terms and the databases
 * still serve them: an order in flight commits and is answered. Then the destroy hooks stop the
 * timers, beforeApplicationShutdown resigns the writer terms (ClusterService), and the
 * application-shutdown hooks close Redis and the databases.
 *
 * From the first moment of closing, new requests (readiness included) are answered 503 by the
 * pipeline (`state.closing`) and their connections close, so no new order lands on a stopping
 * service; the server keeps listening until dispose only to say so.
 *
 * The wait is bounded: a client that stalled in the middle of its request would hold SIGTERM
 * indefinitely. SHUTDOWN_DRAIN_MS after closing starts, the connections still open are closed,
 * requests in flight included. A request counts from its headers (the server's `request` event),
 * so one whose body is still arriving is waited for. Fastify's inject (the cluster's forwarded
 * requests) does not touch the server: the cluster node's own stop waits for those.
 */
export function installGracefulDrain(
  adapter: FastifyAdapter,
  state: Lifecycle,
  drainMs: number,
  log: Logger,
): GracefulDrain {
  const drain: GracefulDrain = { closing: null, first: null };
  const fastify = adapter.getInstance() as unknown as FastifyInstance;
  let timer: NodeJS.Timeout | null = null;
  let forced = false;
  // A count, and one listener function shared by every response: no set entry and no closure
  // per request on the hot routes.
  let inFlight = 0;
  let drained: (() => void) | null = null;
  const settled = (): void => {
    inFlight -= 1;
    if (inFlight === 0) drained?.();
  };
  fastify.server.on('request', (_req: IncomingMessage, res: ServerResponse) => {
    inFlight += 1;
    // 'close' comes once the answer is sent or the connection is gone, whichever is first.
    res.once('close', settled);
  });
  const startDeadline = (): void => {
    if (timer !== null) return;
    timer = setTimeout(() => {
      forced = true;
      log.warn(
        { drain_ms: drainMs, in_flight: inFlight },
        'SHUTDOWN_DRAIN_MS passed: closing the connections still open, requests in flight included',
      );
      fastify.server.closeAllConnections();
      drained?.();
    }, drainMs);
    timer.unref();
  };
  fastify.addHook('preClose', (done) => {
    state.closing = true;
    startDeadline();
    done();
  });
  fastify.addHook('onClose', (_instance, done) => {
    if (timer !== null) clearTimeout(timer);
    if (forced) log.warn('HTTP server closed after the drain deadline; closing the databases');
    else log.info('HTTP server closed: every request answered; closing the databases');
    done();
  });

  const beforeClose = adapter.beforeClose.bind(adapter);
  adapter.beforeClose = async () => {
    state.closing = true;
    log.info(
      { drain_ms: drainMs },
      'shutting down: new requests are answered 503; requests in flight may finish',
    );
    beforeClose();
    // Waits a shutdown cuts short end now, so the drain below does not wait them out.
    drain.closing?.();
    // The webhook deliveries in flight first, while new requests are still told 503.
    await drain.first?.();
    // No new connection from here (README: it stops accepting connections, then finishes the
    // requests in flight); Fastify's own close later finds the listener closed already.
    if (fastify.server.listening) fastify.server.close();
    startDeadline();
    if (inFlight === 0 || forced) return;
    await new Promise<void>((resolve) => (drained = resolve));
    drained = null;
    log.info(
      { forced },
      'the requests in flight at shutdown are answered: stopping the timers, then the writer terms',
    );
  };
  return drain;
}

export interface GracefulDrain {
  /**
   * Called at the start of closing, before any wait: what a shutdown cuts short instead of
   * waiting it out (a sandbox scenario's DELAY answers 503 at once).
   */
  closing: (() => void) | null;
  /**
   * Awaited at the start of closing, before the server stops accepting connections (new
   * requests meanwhile are answered 503): the webhook worker's wait for its deliveries.
   */
  first: (() => Promise<void>) | null;
}
