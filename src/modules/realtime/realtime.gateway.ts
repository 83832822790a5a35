import type { IncomingMessage } from 'node:http';
import { WebSocketGateway, type OnGatewayConnection } from '@nestjs/websockets';
import type { WebSocket } from 'ws';
import { RealtimeHub } from './realtime-hub.service.js';

/** The realtime feed at /api/v1/ws, on the HTTP port. The protocol lives in RealtimeHub. */
@WebSocketGateway({ path: '/api/v1/ws' })
export class RealtimeGateway implements OnGatewayConnection {
  constructor(private readonly hub: RealtimeHub) {}

  handleConnection(socket: WebSocket, req: IncomingMessage): void {
    this.hub.accept(socket, req);
  }
}
