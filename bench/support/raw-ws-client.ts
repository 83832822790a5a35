/**
 * A minimal WebSocket client over a plain TCP socket, for load generation: the opening handshake,
 * masked text frames out, and unfragmented frames in, parsed in place from each chunk the socket
 * reads. It answers pings and reports text messages as byte ranges of the chunk, so a subscriber
 * that reads two numbers per message does no copying, decoding or JSON parsing. The `ws` client
 * costs several times more per message, and on a 2-core machine the subscribers' share of the CPU
 * is taken from the server being measured.
 */
import { createHash, randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
/** Every client reads into this buffer; each chunk is handled before the next read. */
const SHARED_READ_BUFFER = Buffer.allocUnsafe(256 * 1024);

export interface RawWsHandlers {
  /** A text message: `buf[start, end)`. Valid only during the call. */
  onText(buf: Buffer, start: number, end: number): void;
  onClose(): void;
}

export class RawWsClient {
  private pending: Buffer | null = null;
  private closed = false;

  private constructor(
    private readonly socket: Socket,
    private readonly handlers: RawWsHandlers,
  ) {}

  /**
   * Connects and completes the handshake on `ws://host:port/path`. Reads go through net's
   * `onread` option into one shared buffer, which skips the stream machinery per chunk; a frame
   * cut at a chunk boundary is copied out until the rest arrives.
   */
  static open(url: string, handlers: RawWsHandlers): Promise<RawWsClient> {
    const u = new URL(url);
    return new Promise((resolve, reject) => {
      const key = randomBytes(16).toString('base64');
      const accept = createHash('sha1')
        .update(key + GUID)
        .digest('base64');
      let client: RawWsClient | null = null;
      let head = Buffer.alloc(0);
      const onHandshake = (chunk: Buffer): void => {
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) return;
        const lines = head.subarray(0, end).toString('latin1').split('\r\n');
        const ok =
          / 101 /.test(lines[0]) &&
          lines.some((l) => l.toLowerCase() === `sec-websocket-accept: ${accept.toLowerCase()}`);
        if (!ok) {
          socket.destroy();
          reject(new Error(`handshake refused: ${lines[0]}`));
          return;
        }
        client = new RawWsClient(socket, handlers);
        socket.on('close', () => client!.ended());
        const rest = head.subarray(end + 4);
        if (rest.length > 0) client.read(rest);
        resolve(client);
      };
      const socket = connect({
        host: u.hostname,
        port: Number(u.port),
        noDelay: true,
        onread: {
          buffer: SHARED_READ_BUFFER,
          callback: (n: number, buf: Uint8Array): boolean => {
            const chunk = Buffer.from(buf.buffer, buf.byteOffset, n);
            if (client === null) onHandshake(Buffer.from(chunk));
            else client.read(chunk);
            return true;
          },
        },
      });
      socket.once('error', reject);
      socket.once('connect', () => {
        socket.write(
          `GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\n` +
            `Connection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
        );
      });
    });
  }

  sendText(text: string): void {
    this.sendFrame(0x1, Buffer.from(text));
  }

  terminate(): void {
    this.closed = true;
    this.socket.destroy();
  }

  private sendFrame(opcode: number, payload: Buffer): void {
    if (payload.length > 65_535) throw new Error('client frames are small');
    const header = payload.length < 126 ? 2 : 4;
    const frame = Buffer.allocUnsafe(header + 4 + payload.length);
    frame[0] = 0x80 | opcode;
    if (header === 2) frame[1] = 0x80 | payload.length;
    else {
      frame[1] = 0x80 | 126;
      frame.writeUInt16BE(payload.length, 2);
    }
    const mask = randomBytes(4);
    mask.copy(frame, header);
    for (let i = 0; i < payload.length; i++) frame[header + 4 + i] = payload[i] ^ mask[i & 3];
    this.socket.write(frame);
  }

  private ended(): void {
    if (this.closed) return;
    this.closed = true;
    this.handlers.onClose();
  }

  private read(chunk: Buffer): void {
    let buf = chunk;
    if (this.pending !== null) {
      buf = Buffer.concat([this.pending, chunk]);
      this.pending = null;
    }
    let at = 0;
    while (buf.length - at >= 2) {
      const opcode = buf[at] & 0x0f;
      let len = buf[at + 1] & 0x7f;
      let start = at + 2;
      if (len === 126) {
        if (buf.length - at < 4) break;
        len = buf.readUInt16BE(at + 2);
        start = at + 4;
      } else if (len === 127) {
        if (buf.length - at < 10) break;
        len = Number(buf.readBigUInt64BE(at + 2));
        start = at + 10;
      }
      const end = start + len;
      if (end > buf.length) break;
      if (opcode === 0x1) this.handlers.onText(buf, start, end);
      else if (opcode === 0x9) this.sendFrame(0xa, buf.subarray(start, end));
      else if (opcode === 0x8) {
        this.terminate();
        this.handlers.onClose();
        return;
      }
      at = end;
    }
    if (at < buf.length) this.pending = Buffer.from(buf.subarray(at));
  }
}
