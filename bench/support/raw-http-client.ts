/**
 * A lean HTTP/1.1 load generator client: keep-alive TCP connections, one request in flight each,
 * requests written as one pre-built buffer, responses read as status line + Content-Length body.
 * node:http's client costs several times more per request, and on a 2-core machine its CPU (and
 * its own event-loop lag, which a latency measured from the due time includes) comes out of what
 * the server being measured gets.
 */
import { connect, type Socket } from 'node:net';

/** The answer's status and body (`body` is valid only during the call: copy what you keep). */
type Done = (status: number, body: Buffer) => void;

const HEADER_END = Buffer.from('\r\n\r\n');
const CONTENT_LENGTH = Buffer.from('\r\ncontent-length:');

/** Case-insensitive search for `\r\ncontent-length:` within buf[0, end). */
function contentLength(buf: Buffer, end: number): number {
  const lower = Buffer.from(buf.subarray(0, end).toString('latin1').toLowerCase(), 'latin1');
  const i = lower.indexOf(CONTENT_LENGTH);
  if (i < 0) return -1;
  let n = 0;
  let j = i + CONTENT_LENGTH.length;
  while (j < end && lower[j] === 0x20) j++;
  for (; j < end; j++) {
    const c = lower[j];
    if (c < 48 || c > 57) break;
    n = n * 10 + (c - 48);
  }
  return n;
}

export class RawHttpConnection {
  private pending: Buffer | null = null;
  private done: Done | null = null;
  private failed: ((err: Error) => void) | null = null;
  busy = false;
  /** Closed or failed: it takes no more requests (the caller replaces it). */
  dead = false;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (c: Buffer) => this.read(c));
    socket.on('error', (err) => this.fail(err));
    socket.on('close', () => this.fail(new Error('connection closed')));
  }

  static open(host: string, port: number): Promise<RawHttpConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host, port, noDelay: true });
      socket.once('connect', () => {
        socket.off('error', reject);
        resolve(new RawHttpConnection(socket));
      });
      socket.once('error', reject);
    });
  }

  /** Sends one complete request; `done` gets the status once the whole response has arrived. */
  send(request: Buffer, done: Done, failed: (err: Error) => void): void {
    if (this.busy) throw new Error('one request at a time per connection');
    if (this.dead) {
      queueMicrotask(() => failed(new Error('connection closed')));
      return;
    }
    this.busy = true;
    this.done = done;
    this.failed = failed;
    this.socket.write(request);
  }

  close(): void {
    this.done = null;
    this.failed = null;
    this.socket.destroy();
  }

  private fail(err: Error): void {
    if (!this.dead) {
      this.dead = true;
      this.socket.destroy();
    }
    const f = this.failed;
    this.busy = false;
    this.done = null;
    this.failed = null;
    f?.(err);
  }

  private read(chunk: Buffer): void {
    const buf = this.pending === null ? chunk : Buffer.concat([this.pending, chunk]);
    this.pending = null;
    const headerEnd = buf.indexOf(HEADER_END);
    if (headerEnd < 0) {
      this.pending = buf;
      return;
    }
    const length = contentLength(buf, headerEnd);
    if (length < 0) {
      this.fail(new Error('response without Content-Length'));
      return;
    }
    const total = headerEnd + 4 + length;
    if (buf.length < total) {
      this.pending = buf;
      return;
    }
    // "HTTP/1.1 201 Created": the three digits after the first space.
    const sp = buf.indexOf(0x20);
    const status = (buf[sp + 1] - 48) * 100 + (buf[sp + 2] - 48) * 10 + (buf[sp + 3] - 48);
    const done = this.done;
    this.busy = false;
    this.done = null;
    this.failed = null;
    if (buf.length > total) this.pending = Buffer.from(buf.subarray(total)); // not expected
    done?.(status, buf.subarray(headerEnd + 4, total));
  }
}

/** A POST with a JSON body as one buffer. */
export function postRequest(
  host: string,
  path: string,
  headers: Record<string, string>,
  body: string,
): Buffer {
  const bodyBuf = Buffer.from(body);
  let head = `POST ${path} HTTP/1.1\r\nhost: ${host}\r\ncontent-type: application/json\r\ncontent-length: ${bodyBuf.length}\r\n`;
  for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
  return Buffer.concat([Buffer.from(head + '\r\n'), bodyBuf]);
}
