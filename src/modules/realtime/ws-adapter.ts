import { Logger } from '@nestjs/common';
import { WsAdapter } from '@nestjs/platform-ws';
import type { IncomingMessage } from 'node:http';
import { requestIdFor } from '../../common/http/request-id.js';

// The adapter's own signature takes `any`; this is the part of ws's server it uses.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type WsServerLike = { on(event: string, cb: (...args: any[]) => void): unknown };

/** Errors a peer causes by breaking the WebSocket protocol or dropping the connection. */
function isPeerError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return (
    typeof code === 'string' &&
    (code.startsWith('WS_ERR_') || code === 'ECONNRESET' || code === 'EPIPE')
  );
}

/**
 * Nest's WebSocket adapter, logging what a client does wrong at debug instead of error: a
 * malformed frame (bad RSV bits, invalid UTF-8, an oversized message) is the client's fault, is
 * answered by `ws` with its close code (1002, 1007, 1009), and must not let anyone flood the error
 * log. Everything else still logs as an error. The handshake's 101 answer carries X-Request-Id
 * and Svc-API-Version, as every response does.
 */
export class PeerTolerantWsAdapter extends WsAdapter {
  private readonly peerLog = new Logger('Realtime');

  override bindErrorHandler(server: WsServerLike): WsServerLike {
    server.on('connection', (ws: { on(e: 'error', cb: (err: Error) => void): void }) =>
      ws.on('error', (err: Error) => {
        if (isPeerError(err)) this.peerLog.debug(`client protocol error: ${err.message}`);
        else this.peerLog.error(err);
      }),
    );
    server.on('error', (err: Error) => this.peerLog.error(err));
    // The 101 answer carries the headers every response does.
    server.on('headers', (headers: string[], req: IncomingMessage) => {
      headers.push(`X-Request-Id: ${requestIdFor(req)}`, 'Svc-API-Version: v1');
    });
    return server;
  }
}
