import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Requests pipelined on one connection run as they arrive, each as its own request, while their
 * answers leave in order. Once an answer will close the connection (a refusal with
 * `Connection: close`: a malformed Host, a body the parser refused, an Expect it cannot meet,
 * a shutdown), the requests after it on that connection can never be answered, so they must not
 * run either: an order placed behind a refused request was applied and its 201 never sent.
 * The order of arrival is counted per connection here; the request pipeline asks
 * {@link behindClose} before each step that can change something.
 */
const seen = new WeakMap<Socket, number>();
const closingAt = new WeakMap<Socket, number>();
/**
 * A request's place in its connection's order, kept on the request itself: a WeakMap entry per
 * request (as the connections' counts are) cost a new ephemeron for every request on the hot path.
 */
const ARRIVAL = Symbol('arrival');
type Arrived = IncomingMessage & { [ARRIVAL]?: number };
const arrivalOf = (req: IncomingMessage): number | undefined => (req as Arrived)[ARRIVAL];

/** Counts a request in its connection's order (call once, as it arrives). */
export function arrived(req: IncomingMessage): void {
  const n = (seen.get(req.socket) ?? 0) + 1;
  seen.set(req.socket, n);
  (req as Arrived)[ARRIVAL] = n;
}

/** This request's answer closes the connection: the requests after it are not run. */
export function closesConnection(req: IncomingMessage): void {
  closeAt(req.socket, arrivalOf(req) ?? seen.get(req.socket) ?? 0);
}

/**
 * An answer given outside the pipeline (the 417 of an unmet Expect) closes the connection after
 * the requests that arrived before it.
 */
export function closesAfterArrived(socket: Socket): void {
  closeAt(socket, seen.get(socket) ?? 0);
}

/** Whether no request has arrived on this request's connection after it (none is queued). */
export function isLatest(req: IncomingMessage): boolean {
  const n = arrivalOf(req);
  return n !== undefined && seen.get(req.socket) === n;
}

/** Whether an answer before this request's closes the connection (it would never be answered). */
export function behindClose(req: IncomingMessage): boolean {
  const at = closingAt.get(req.socket);
  const n = arrivalOf(req);
  return at !== undefined && n !== undefined && n > at;
}

function closeAt(socket: Socket, n: number): void {
  const at = closingAt.get(socket);
  if (at === undefined || n < at) closingAt.set(socket, n);
}
