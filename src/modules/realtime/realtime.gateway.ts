import type { IncomingMessage } from 'node:http';
import { WebSocketGateway, type OnGatewayConnection } from '@nestjs/websockets';
import type { WebSocket } from 'ws';
import { RealtimeHub } from './realtime-hub.service.js';

/** The largest message a client may send (the largest legitimate one is a few kilobytes). */
export const WS_MAX_MESSAGE_BYTES = 64 * 1024;

/**
 * The realtime feed at /api/v1/ws, on the HTTP port. The protocol lives in RealtimeHub. A larger
 * message is refused by `ws` with close 1009 before it is buffered whole. Pings are answered by
 * the hub (not by `ws` on its own), so a client that floods pings and never reads its pongs meets
 * the send-buffer bound like any slow consumer.
 */
@WebSocketGateway({ path: '/api/v1/ws', maxPayload: WS_MAX_MESSAGE_BYTES, autoPong: false })
export class RealtimeGateway implements OnGatewayConnection {
  constructor(private readonly hub: RealtimeHub) {}

  handleConnection(socket: WebSocket, req: IncomingMessage): void {
    this.hub.accept(socket, req);
  }
}
