import { mapError } from '../../common/errors/error-mapper.js';

/** Close codes of CONTRACT.md: 4401 unauthenticated, 4403 forbidden; and ours beyond it. */
export const WS_CLOSE = {
  UNAUTHENTICATED: 4401,
  FORBIDDEN: 4403,
  /** The client fell too far behind (its send buffer passed WS_MAX_BUFFERED_BYTES). */
  SLOW_CONSUMER: 4008,
  /** Too many connections from one IP. */
  CONNECTION_LIMIT: 4429,
  /** Kept sending far past the per-connection message budget (same code: "too many"). */
  RATE_LIMITED: 4429,
  /** Missed heartbeats. */
  DEAD: 4000,
  /** RFC 6455: the server met an unexpected condition (a 5xx-class error while authenticating). */
  INTERNAL_ERROR: 1011,
  /** RFC 6455: the service is restarting (a sandbox DISCONNECT scenario); reconnect. */
  SERVICE_RESTART: 1012,
} as const;

export interface WsError {
  type: 'error';
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

/**
 * Realtime errors go through the same mapper as HTTP errors, so codes and messages match; the
 * HTTP status picks the close code where the error ends the connection.
 */
export function toWsError(
  err: unknown,
  requestId: string,
): { message: WsError; close: number | null; unexpected: boolean } {
  const mapped = mapError(err, requestId);
  const e = mapped.body.error;
  const close =
    mapped.status === 401
      ? WS_CLOSE.UNAUTHENTICATED
      : mapped.status === 403
        ? WS_CLOSE.FORBIDDEN
        : mapped.status >= 500
          ? WS_CLOSE.INTERNAL_ERROR
          : null;
  return {
    message: {
      type: 'error',
      code: e.code,
      message: e.message,
      ...(Object.keys(e.details).length > 0 ? { details: e.details } : {}),
    },
    close,
    unexpected: mapped.unexpected,
  };
}
