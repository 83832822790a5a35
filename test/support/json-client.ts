import type { IncomingHttpHeaders } from 'node:http';
import { connect, type Socket } from 'node:net';

/** What {@link jsonClient} answers: the status, the raw text and the parsed body (if JSON). */
export interface ClientResponse {
  status: number;
  /** Header names lower-cased, as node:http gives them. */
  headers: IncomingHttpHeaders;
  text: string;
  // Bodies are JSON of many shapes; tests read them field by field.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

interface Job {
  method: string;
  bytes: Buffer;
  timeoutMs: number;
  /** Sent once already on a kept-alive socket the server had closed unread: not sent again. */
  retried: boolean;
  resolve(res: ClientResponse): void;
  reject(err: Error): void;
}

const CRLF2 = Buffer.from('\r\n\r\n');

/** One HTTP/1.1 response read off a socket's bytes; null until the whole of it is there. */
function parseResponse(
  buf: Buffer,
  method: string,
  ended: boolean,
): { res: ClientResponse; used: number; close: boolean } | null {
  const headEnd = buf.indexOf(CRLF2);
  if (headEnd < 0) return null;
  const [statusLine, ...lines] = buf.subarray(0, headEnd).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
  if (!Number.isInteger(status)) throw new Error(`not an HTTP response: ${statusLine}`);
  const headers: IncomingHttpHeaders = {};
  for (const line of lines) {
    const i = line.indexOf(':');
    if (i <= 0) continue;
    const name = line.slice(0, i).trim().toLowerCase();
    const value = line.slice(i + 1).trim();
    if (name === 'set-cookie') headers['set-cookie'] = [...(headers['set-cookie'] ?? []), value];
    else headers[name] = headers[name] === undefined ? value : `${String(headers[name])}, ${value}`;
  }
  const start = headEnd + 4;
  const close = /\bclose\b/i.test(String(headers.connection ?? ''));
  let body: Buffer;
  let used: number;
  if (method === 'HEAD' || status === 204 || status === 304 || (status >= 100 && status < 200)) {
    body = Buffer.alloc(0);
    used = start;
  } else if (/\bchunked\b/i.test(String(headers['transfer-encoding'] ?? ''))) {
    const parts: Buffer[] = [];
    let at = start;
    for (;;) {
      const lineEnd = buf.indexOf('\r\n', at);
      if (lineEnd < 0) return null;
      const size = parseInt(buf.subarray(at, lineEnd).toString('latin1'), 16);
      if (size === 0) {
        // No trailers are sent to these tests: the last chunk is followed by the blank line.
        if (buf.length < lineEnd + 4) return null;
        used = lineEnd + 4;
        break;
      }
      if (buf.length < lineEnd + 2 + size + 2) return null;
      parts.push(buf.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
    }
    body = Buffer.concat(parts);
  } else if (headers['content-length'] !== undefined) {
    const length = Number(headers['content-length']);
    if (buf.length < start + length) return null;
    body = buf.subarray(start, start + length);
    used = start + length;
  } else {
    // Delimited by the end of the connection.
    if (!ended) return null;
    body = buf.subarray(start);
    used = buf.length;
  }
  const text = body.toString('utf8');
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { res: { status, headers, text, body: parsed }, used, close };
}

/** A kept-alive connection that carries one request at a time. */
class Connection {
  private readonly socket: Socket;
  private buf: Buffer = Buffer.alloc(0);
  private job: Job | null = null;
  private timer: NodeJS.Timeout | undefined;
  private served = 0;
  private ended = false;
  closed = false;

  constructor(
    host: string,
    port: number,
    private readonly done: (conn: Connection, retry: Job | null) => void,
  ) {
    this.socket = connect({ host, port, noDelay: true });
    this.socket.on('data', (chunk: Buffer) => {
      this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
      this.arm();
      this.read();
    });
    this.socket.on('end', () => {
      this.ended = true;
      this.read();
      this.fail(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
    });
    this.socket.on('error', (err) => this.fail(err));
    this.socket.on('close', () =>
      this.fail(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })),
    );
  }

  get busy(): boolean {
    return this.job !== null;
  }

  send(job: Job): void {
    this.job = job;
    // As node:http's `timeout`: the socket idle that long (counted from its connection, and from
    // each byte that arrives), not the whole exchange.
    if (this.socket.connecting) this.socket.once('connect', () => this.arm());
    else this.arm();
    this.socket.write(job.bytes);
  }

  private arm(): void {
    const job = this.job;
    if (job === null) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      const got =
        this.buf.length === 0
          ? 'nothing'
          : JSON.stringify(this.buf.toString('latin1').slice(0, 300));
      this.fail(
        new Error(
          `no answer within ${job.timeoutMs} ms (request ${this.served + 1} on its socket; read ${got})`,
        ),
        false,
      );
    }, job.timeoutMs);
  }

  private read(): void {
    const job = this.job;
    if (job === null) return;
    let parsed: ReturnType<typeof parseResponse>;
    try {
      parsed = parseResponse(this.buf, job.method, this.ended);
    } catch (err) {
      this.fail(err as Error, false);
      return;
    }
    if (parsed === null) return;
    clearTimeout(this.timer);
    this.job = null;
    this.served++;
    this.buf = this.buf.subarray(parsed.used);
    if (parsed.close) this.shut();
    job.resolve(parsed.res);
    this.done(this, null);
  }

  /** Ends the current request with `err`, or hands it back for a new connection. */
  private fail(err: Error, mayRetry = true): void {
    const job = this.job;
    this.shut();
    if (job === null) {
      this.done(this, null);
      return;
    }
    clearTimeout(this.timer);
    this.job = null;
    // A kept-alive socket the server had closed before reading the request (nothing came back):
    // the request was never seen, so it goes once more on a fresh connection, as a browser does.
    if (mayRetry && this.served > 0 && this.buf.length === 0 && !job.retried) {
      job.retried = true;
      this.done(this, job);
      return;
    }
    job.reject(err);
    this.done(this, null);
  }

  shut(): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.destroy();
  }
}

/**
 * A lean JSON client for tests that send thousands of requests: HTTP/1.1 written and read directly
 * on at most `maxSockets` kept-alive sockets per origin (one request at a time on each, the rest
 * queued). fetch (undici) and even node:http's client spend several times the CPU of the request
 * itself on streams, agents and header objects, and a test's client shares the process (and the
 * two cores) with the app it calls.
 */
export function jsonClient(maxSockets: number) {
  const pools = new Map<string, { conns: Connection[]; queue: Job[] }>();

  function pump(origin: string, host: string, port: number): void {
    const pool = pools.get(origin)!;
    while (pool.queue.length > 0) {
      let conn = pool.conns.find((c) => !c.busy && !c.closed);
      if (conn === undefined) {
        if (pool.conns.length >= maxSockets) return;
        conn = new Connection(host, port, (c, retry) => {
          if (c.closed) pool.conns = pool.conns.filter((x) => x !== c);
          if (retry !== null) pool.queue.unshift(retry);
          pump(origin, host, port);
        });
        pool.conns.push(conn);
      }
      conn.send(pool.queue.shift()!);
    }
  }

  const send = (
    url: string,
    method: string,
    headers: Record<string, string>,
    json?: unknown,
    timeoutMs = 10_000,
  ): Promise<ClientResponse> =>
    new Promise((resolve, reject) => {
      const u = new URL(url);
      const payload = json === undefined ? undefined : Buffer.from(JSON.stringify(json));
      let head = `${method} ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nConnection: keep-alive\r\n`;
      for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
      if (payload !== undefined) {
        head += `content-type: application/json\r\ncontent-length: ${payload.length}\r\n`;
      }
      head += '\r\n';
      const bytes =
        payload === undefined
          ? Buffer.from(head, 'latin1')
          : Buffer.concat([Buffer.from(head, 'latin1'), payload]);
      const origin = u.host;
      if (!pools.has(origin)) pools.set(origin, { conns: [], queue: [] });
      pools.get(origin)!.queue.push({ method, bytes, timeoutMs, retried: false, resolve, reject });
      pump(origin, u.hostname, Number(u.port || 80));
    });

  return {
    send,
    close: () => {
      for (const pool of pools.values()) {
        for (const c of pool.conns) c.shut();
        pool.conns = [];
      }
    },
  };
}
