/**
 * HTTP the framework never sees as a request, answered in the contract's shape on the socket:
 * malformed requests, timeouts, odd expectations, CONNECT, and upgrades that are not this
 * service's WebSocket handshake.
 */
import { ServerResponse, STATUS_CODES, type IncomingMessage, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { DomainError } from '../errors/domain-error.js';
import { mapError } from '../errors/error-mapper.js';
import { closesAfterArrived } from './connection-order.js';
import { timesSent } from './raw-headers.js';
import { requestIdFor } from './request-id.js';
/**
 * Node hands every request with an `Upgrade` header to the `upgrade` listeners, and Nest's
 * WebSocket adapter destroys the socket of any that is not its path: `Upgrade: h2c` (curl
 * --http2, Java's HttpClient on plain http) on any route got no answer at all. Only a WebSocket
 * upgrade of /api/v1/ws goes to the adapter now; any other request is served as the HTTP/1.1
 * request it also is (RFC 9110: a server may ignore Upgrade), on a connection that then closes.
 * One with a body is refused with 400 (its body can no longer be read once Node let go of it).
 */
export function serveOtherUpgradesAsHttp(
  server: Server,
  admitHandshake: (req: IncomingMessage) => Promise<void> = async () => undefined,
): void {
  const adapterListeners = server.listeners('upgrade') as ((...args: unknown[]) => void)[];
  server.removeAllListeners('upgrade');
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    // Node takes its own error listener off an upgraded socket: until the adapter adds one (after
    // the answers ahead of it, and the per-IP charge), a reset from the client would be an
    // unhandled 'error' event that stops the process.
    socket.on('error', () => socket.destroy());
    // Pipelined after a request still being answered: its answer goes first (handing the
    // socket on before that threw ERR_HTTP_SOCKET_ASSIGNED, and the process stopped).
    whenEarlierAnswered(socket, undefined, () => {
      try {
        upgradeOrServe(server, adapterListeners, admitHandshake, req, socket, head);
      } catch (err) {
        socket.destroy(err as Error);
      }
    });
  });
}

function upgradeOrServe(
  server: Server,
  adapterListeners: ((...args: unknown[]) => void)[],
  admitHandshake: (req: IncomingMessage) => Promise<void>,
  req: IncomingMessage,
  socket: Socket,
  head: Buffer,
): void {
  const path = (req.url ?? '/').split('?')[0];
  if (/\bwebsocket\b/i.test(req.headers.upgrade ?? '') && path === '/api/v1/ws') {
    // The handshake counts against the per-IP ceiling like any request, before it is judged, as
    // the HTTP routes are (429 before the upgrade; 503 while shutting down).
    admitHandshake(req).then(
      () => {
        if (socket.destroyed) return;
        const refusal = handshakeProblem(req);
        if (refusal !== null) {
          answerClientError(refusal, socket, req);
          return;
        }
        try {
          for (const l of adapterListeners) l.call(server, req, socket, head);
        } catch (err) {
          socket.destroy(err as Error);
        }
      },
      (err: unknown) => answerClientError(err as Error, socket, req),
    );
    return;
  }
  // Bytes after the headers without a length are the next pipelined request, not a body: this
  // one is answered, that one (which the parser no longer reads) is not run.
  const hasBody =
    req.headers['transfer-encoding'] !== undefined ||
    Number(req.headers['content-length'] ?? 0) > 0;
  if (hasBody) {
    answerClientError(
      new DomainError(
        'BAD_REQUEST',
        'A request with a body cannot ask to upgrade the connection; send it without the Upgrade header',
      ),
      socket,
    );
    return;
  }
  const res = new ServerResponse(req);
  res.shouldKeepAlive = false;
  res.assignSocket(socket);
  res.on('finish', () => socket.end());
  server.emit('request', req, res);
}

/**
 * RFC 3986 host and optional port: an IP literal (IPv6 with an optional zone id, as Node and
 * Python send for link-local addresses, or IPvFuture), an IPv4 address or a registered name,
 * which may be empty (RFC 9112 3.2: a request target without an authority).
 */
const HOST_HEADER =
  /^(?:\[[0-9A-Fa-f:.]+(?:%(?:25)?[A-Za-z0-9\-._~]+)?\]|\[v[0-9A-Fa-f]+\.[A-Za-z0-9\-._~!$&'()*+,;=:]+\]|[A-Za-z0-9\-._~!$&'()*+,;=%]*)(?::\d*)?$/;

/**
 * What RFC 9112 has a server refuse with 400 that Node's parser lets through: an HTTP version
 * other than 1.0 or 1.1, and (section 3.2) an HTTP/1.1 request without a Host, any request with
 * more than one, or a Host value that is not a host.
 */
export function malformedRequest(req: IncomingMessage): DomainError | null {
  if (req.httpVersion !== '1.1' && req.httpVersion !== '1.0') {
    return new DomainError(
      'BAD_REQUEST',
      `HTTP/${req.httpVersion} is not supported here: send HTTP/1.1`,
    );
  }
  // RFC 9112 6.3: a request whose last transfer coding is not chunked has no knowable length
  // (Node would read the next pipelined request as its body): 400, and the connection closes.
  const te = req.headers['transfer-encoding'];
  if (te !== undefined && te.split(',').pop()?.trim().toLowerCase() !== 'chunked') {
    return new DomainError(
      'BAD_REQUEST',
      `Transfer-Encoding ${te.slice(0, 40)} does not end with chunked: the body's length is unknown`,
    );
  }
  const hosts = timesSent(req.rawHeaders, 'host');
  if (hosts > 1) return new DomainError('BAD_REQUEST', 'A request takes one Host header');
  if (hosts === 0) {
    return req.httpVersion === '1.1'
      ? new DomainError('BAD_REQUEST', 'An HTTP/1.1 request needs a Host header')
      : null;
  }
  return HOST_HEADER.test(req.headers.host ?? '')
    ? null
    : new DomainError('BAD_REQUEST', 'Invalid Host header: expected a host name and port');
}

/**
 * What `ws` would refuse in a WebSocket handshake (RFC 6455 4.2.1), refused here first so the
 * answer is the contract's JSON body with the usual headers instead of `ws`'s text/html one.
 */
function handshakeProblem(req: IncomingMessage): DomainError | null {
  if (req.method !== 'GET') {
    // The same Allow as the path answers without an upgrade (GET, and HEAD with it).
    return new DomainError(
      'METHOD_NOT_ALLOWED',
      'A WebSocket handshake is a GET request',
      { allowed_methods: ['GET', 'HEAD'] },
      { Allow: 'GET, HEAD' },
    );
  }
  if (req.httpVersion !== '1.1') {
    return new DomainError('BAD_REQUEST', 'A WebSocket handshake needs HTTP/1.1 (RFC 6455 4.1)');
  }
  const malformed = malformedRequest(req);
  if (malformed !== null) return malformed;
  if ((req.headers.upgrade ?? '').trim().toLowerCase() !== 'websocket') {
    return new DomainError('BAD_REQUEST', 'Invalid Upgrade header: expected "websocket"');
  }
  const key = req.headers['sec-websocket-key'];
  if (typeof key !== 'string' || !/^[+/0-9A-Za-z]{22}==$/.test(key.trim())) {
    return new DomainError('BAD_REQUEST', 'Missing or invalid Sec-WebSocket-Key header');
  }
  const version = (req.headers['sec-websocket-version'] ?? '').trim();
  if (version !== '13' && version !== '8') {
    return new DomainError(
      'BAD_REQUEST',
      'Missing or unsupported Sec-WebSocket-Version header: this server speaks version 13 (RFC 6455), and the draft version 8 as the ws library does',
      { supported_versions: [13, 8] },
      { 'Sec-WebSocket-Version': '13, 8' },
    );
  }
  return null;
}

/**
 * What Node's HTTP server would answer without a body, or not at all, answered in the contract's
 * shape: an `Expect` other than 100-continue (417), and CONNECT (405: no tunnels here).
 */
export function answerOddHttp(server: Server): void {
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    closesAfterArrived(req.socket);
    const answer = closingAnswer(
      new DomainError(
        'EXPECTATION_FAILED',
        `Expect: ${String(req.headers.expect).slice(0, 60)} is not supported; only 100-continue is`,
      ),
      req,
    );
    res.writeHead(answer.status, answer.headers);
    res.end(answer.body);
  });
  server.on('connect', (req: IncomingMessage, socket: Socket) => {
    const methods = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
    answerClientError(
      new DomainError(
        'METHOD_NOT_ALLOWED',
        'CONNECT is not supported: this is not a proxy',
        { allowed_methods: methods },
        { Allow: methods.join(', ') },
      ),
      socket,
      req,
    );
  });
}

/**
 * The contract's answer to a request answered outside Fastify, on a connection that then closes:
 * its status, every header (the caller's X-Request-Id kept when the request was parsed) and body.
 */
function closingAnswer(
  err: Error,
  req?: IncomingMessage,
): { status: number; headers: Record<string, string>; body: string } {
  const id = requestIdFor(req ?? ({ headers: {} } as IncomingMessage));
  let mapped = mapError(err, id);
  if (mapped.unexpected) {
    mapped = mapError(new DomainError('BAD_REQUEST', 'Malformed HTTP request'), id);
  }
  const body = JSON.stringify(mapped.body);
  return {
    status: mapped.status,
    headers: {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': String(Buffer.byteLength(body)),
      ...mapped.headers,
      'X-Request-Id': id,
      'Svc-API-Version': 'v1',
      'Cache-Control': 'no-store',
      Date: new Date().toUTCString(),
      Connection: 'close',
    },
    body,
  };
}

/** Sockets with an answer on its way: the parser repeats its error for every later chunk. */
const answering = new WeakSet<Socket>();

/** Earlier answers waited for once (see answerInTurn). */
const waited = new WeakSet<ServerResponse>();

/** A pipelined response of the connection (Node queues them, one on the socket at a time). */
type PendingResponse = ServerResponse & { req?: IncomingMessage };

interface SocketInternals {
  parser?: { incoming?: (IncomingMessage & { _dumped?: boolean }) | null } | null;
  _httpMessage?: PendingResponse | null;
}

/**
 * Malformed HTTP never becomes a request: answer on the socket, still in the contract's shape.
 * Requests pipelined before the malformed one are answered first, in order (RFC 9112 9.3.2):
 * they ran, so their answers must not be lost to ours (an order placed, its 201 dropped).
 */
export function answerClientError(
  err: Error & { code?: string },
  socket: Socket,
  req?: IncomingMessage,
  log?: Logger,
): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  if (req === undefined) {
    if (answering.has(socket)) return;
    answering.add(socket);
  }
  socket.on('error', () => undefined); // the destroy below ends it with the error
  answerInTurn(err, socket, req, log);
}

function answerInTurn(
  err: Error & { code?: string },
  socket: Socket,
  req: IncomingMessage | undefined,
  log: Logger | undefined,
): void {
  if (socket.destroyed) return;
  const internals = socket as Socket & SocketInternals;
  const incoming = internals.parser?.incoming ?? null;
  // A timeout arrives without the request; the parser holds the one still arriving once its
  // headers were read, so its caller's X-Request-Id is kept (a request received whole and
  // waiting for its answer is not the one that timed out).
  const request: (IncomingMessage & { _dumped?: boolean }) | undefined =
    req ?? (incoming !== null && !incoming.complete ? incoming : undefined);
  whenEarlierAnswered(socket, request, () => answerNow(err, socket, request, log));
}

/**
 * Runs `then` once the answers of requests before `own` on this connection have finished (Node
 * hands the socket to the next queued answer on each 'finish'); never if the socket closes first.
 * An answer that finished already (its 'finish' may be on its way) gets one more turn.
 */
function whenEarlierAnswered(
  socket: Socket,
  own: IncomingMessage | undefined,
  then: () => void,
): void {
  if (socket.destroyed) return;
  const current = (socket as Socket & SocketInternals)._httpMessage ?? null;
  if (
    current === null ||
    current.req === own ||
    (current.writableFinished && waited.has(current))
  ) {
    then();
    return;
  }
  let done = false;
  const retry = (): void => {
    if (done) return;
    done = true;
    current.off('finish', retry);
    socket.off('close', drop);
    waited.add(current);
    whenEarlierAnswered(socket, own, then);
  };
  const drop = (): void => {
    done = true;
    current.off('finish', retry);
  };
  current.once('finish', retry);
  socket.once('close', drop);
  if (current.writableFinished) setImmediate(retry);
}

function answerNow(
  err: Error & { code?: string },
  socket: Socket,
  request: (IncomingMessage & { _dumped?: boolean }) | undefined,
  log: Logger | undefined,
): void {
  if (socket.destroyed) return;
  const current = (socket as Socket & SocketInternals)._httpMessage ?? null;
  // No second answer: the request in progress was answered already, before its body had all
  // arrived (Node then discards the rest: _dumped), or its answer has begun on the socket (as
  // Node's own handler checks). A keep-alive client would read ours as its next answer. (A
  // request received whole is dumped too once answered; it is an earlier one, answered above.)
  const own = current !== null && current.req === request ? current : null;
  if (request?._dumped === true || own?.headersSent === true) {
    socket.destroy(err);
    return;
  }
  const answer = closingAnswer(err, request);
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT' && request !== undefined) {
    log?.info(
      {
        req_id: answer.headers['X-Request-Id'],
        method: request.method,
        url: request.url,
        status: answer.status,
      },
      'request timed out before it was fully received',
    );
  }
  if (!socket.writable) {
    socket.destroy(err);
    return;
  }
  const head = Object.entries(answer.headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  const text = `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? ''}\r\n${head}\r\n${answer.body}`;
  if (socket.writableLength === 0) {
    socket.write(text);
    socket.destroy(err);
    return;
  }
  // Earlier answers still wait in the socket's buffer: end after them rather than drop them.
  socket.end(text);
  socket.once('finish', () => socket.destroy(err));
}
