import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** How the receiver answers a path. */
export interface Behaviour {
  /** HTTP status; default 200. */
  status?: number;
  /** Wait this long (wall ms) before answering. */
  delayMs?: number;
  /** A Retry-After header value (seconds or an HTTP date). */
  retryAfter?: string;
  /** A Location header (for 3xx answers). */
  location?: string;
  /** Response body; default `ok`. */
  body?: string;
}

/** One request as it reached the receiver. */
export interface Received {
  method: string;
  /** Path and query as sent. */
  path: string;
  /** Header names lower-cased. */
  headers: Record<string, string>;
  /** The raw request body, byte for byte as received (UTF-8). */
  body: string;
  /** The body parsed as JSON, or undefined. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
  /** Wall-clock arrival time (ms since the epoch). */
  at: number;
}

type Rule = Behaviour | ((r: Received) => Behaviour);

/**
 * A local HTTP receiver on 127.0.0.1 for webhook tests: programmable answers per path (status,
 * delay, Retry-After, redirect), and a record of every request with its raw body and headers.
 */
export class Receiver {
  readonly requests: Received[] = [];
  private readonly rules = new Map<string, Rule>();
  private fallback: Rule = { status: 200 };
  private readonly waiters = new Set<() => void>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  /** Starts a receiver on an ephemeral port (or the given one, e.g. to come back after a stop). */
  static async start(port = 0): Promise<Receiver> {
    let self: Receiver | null = null;
    const server = createServer((req, res) => {
      if (self !== null) self.handle(req, res);
    });
    server.keepAliveTimeout = 1000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    self = new Receiver(server, (server.address() as AddressInfo).port);
    return self;
  }

  /** The base URL, or the URL of a path. */
  url(path = '/'): string {
    return `http://127.0.0.1:${this.port}${path.startsWith('/') ? path : `/${path}`}`;
  }

  /** How to answer requests to `path` (path without query). */
  on(path: string, rule: Rule): this {
    this.rules.set(path, rule);
    return this;
  }

  /** How to answer paths without a rule. */
  otherwise(rule: Rule): this {
    this.fallback = rule;
    return this;
  }

  /** Requests to a path (without query); all requests when omitted. */
  at(path?: string): Received[] {
    return path === undefined
      ? [...this.requests]
      : this.requests.filter((r) => r.path.split('?')[0] === path);
  }

  /** Forget what was received. */
  clear(): void {
    this.requests.length = 0;
  }

  /**
   * Resolves with the requests to `path` once `pred` holds for them (default: at least `count`),
   * polling on every arrival and every 10 ms; rejects after `timeoutMs` (wall).
   */
  async waitFor(path: string | undefined, count: number, timeoutMs = 5000): Promise<Received[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const got = this.at(path);
      if (got.length >= count) return got;
      if (Date.now() > deadline) {
        throw new Error(
          `receiver: expected ${count} request(s) to ${path ?? '*'}, got ${got.length} in ${timeoutMs} ms`,
        );
      }
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(t);
          this.waiters.delete(done);
          resolve();
        };
        const t = setTimeout(done, 10);
        this.waiters.add(done);
      });
    }
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      try {
        json = body === '' ? undefined : JSON.parse(body);
      } catch {
        json = undefined;
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) {
        if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
      }
      const r: Received = {
        method: req.method ?? '',
        path: req.url ?? '/',
        headers,
        body,
        json,
        at: Date.now(),
      };
      this.requests.push(r);
      for (const w of [...this.waiters]) w();
      const rule = this.rules.get(r.path.split('?')[0]) ?? this.fallback;
      const b = typeof rule === 'function' ? rule(r) : rule;
      const answer = (): void => {
        if (res.destroyed) return;
        const h: Record<string, string> = { 'content-type': 'text/plain' };
        if (b.retryAfter !== undefined) h['retry-after'] = b.retryAfter;
        if (b.location !== undefined) h.location = b.location;
        res.writeHead(b.status ?? 200, h);
        res.end(b.body ?? 'ok');
      };
      if (b.delayMs !== undefined && b.delayMs > 0) {
        const t = setTimeout(answer, b.delayMs);
        res.on('close', () => clearTimeout(t));
      } else answer();
    });
  }
}
