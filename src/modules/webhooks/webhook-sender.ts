import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { guardedLookup, isBlockedAddress, isMetadataAddress } from './url-safety.js';
import {
  RESPONSE_EXCERPT_BYTES,
  type AttemptOutcome,
  type SimulatedFailureMode,
} from './webhook-attempts.repository.js';

/** What one POST to a receiver came to. */
export interface SendResult {
  ok: boolean;
  status: number | null;
  error: string | null;
  retryAfterSeconds: number | null;
  outcome: AttemptOutcome;
  /** The first RESPONSE_EXCERPT_BYTES of the answer's body (UTF-8), or null without an answer. */
  responseBody: string | null;
  responseTruncated: boolean;
}

export interface SendOptions {
  timeoutMs: number;
  allowPrivate: boolean;
}

const decoder = new TextDecoder('utf-8', { fatal: false });

function failure(outcome: AttemptOutcome, error: string): SendResult {
  return {
    ok: false,
    status: null,
    error,
    retryAfterSeconds: null,
    outcome,
    responseBody: null,
    responseTruncated: false,
  };
}

/** The error text of an attempt that got no answer within the timeout. */
export function timeoutError(timeoutMs: number): string {
  return `no response within ${timeoutMs} ms`;
}

/** The error text of a refused connection, as Node words it (`connect ECONNREFUSED host:port`). */
export function refusedError(url: string): string {
  try {
    const u = new URL(url);
    const port = u.port !== '' ? u.port : u.protocol === 'https:' ? '443' : '80';
    return `connect ECONNREFUSED ${u.hostname.replace(/^\[|\]$/g, '')}:${port}`;
  } catch {
    return 'connect ECONNREFUSED';
  }
}

/**
 * What a receiver failing as `mode` says would have come to (the workbench's simulated failures),
 * in the same words as a real failure of that kind, so health and the delivery read alike.
 */
export function simulatedResult(
  mode: SimulatedFailureMode,
  url: string,
  timeoutMs: number,
): SendResult {
  switch (mode) {
    case 'HTTP_500':
      return { ...failure('HTTP_ERROR', 'HTTP 500'), status: 500, responseBody: '' };
    case 'TIMEOUT':
      return failure('TIMEOUT', timeoutError(timeoutMs));
    case 'CONNECTION_REFUSED':
      return failure('CONNECTION_REFUSED', refusedError(url));
  }
}

/**
 * One webhook POST. The whole attempt, connection to status line, must fit the timeout; the
 * status decides the outcome. Then at most RESPONSE_EXCERPT_BYTES of the body are read for the
 * attempt log, within what is left of the timeout, and the socket is closed, so a receiver can
 * hold it open neither with an endless body nor by dripping bytes. Redirects are never followed.
 */
export function sendWebhook(
  rawUrl: string,
  body: string,
  headers: Record<string, string>,
  opts: SendOptions,
): Promise<SendResult> {
  const { timeoutMs, allowPrivate } = opts;
  return new Promise((resolve) => {
    let url: URL;
    try {
      url = new URL(rawUrl);
    } catch {
      resolve(failure('CONNECTION_ERROR', 'invalid url'));
      return;
    }
    // An IP-literal host never goes through `lookup` (net.connect skips it), so check it here.
    const literal = url.hostname.replace(/^\[|\]$/g, '');
    if (
      isIP(literal) !== 0 &&
      (isMetadataAddress(literal) || (!allowPrivate && isBlockedAddress(literal)))
    ) {
      resolve(failure('BLOCKED', 'target address is not allowed'));
      return;
    }
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    let settled = false;
    /** Set once the status line has arrived: ends the attempt with what was read of the body. */
    let answered: (() => void) | null = null;
    const done = (r: SendResult): void => {
      clearTimeout(deadline);
      if (settled) return;
      settled = true;
      resolve(r);
    };
    const timedOut = (): void => {
      if (answered !== null) answered();
      else done(failure('TIMEOUT', timeoutError(timeoutMs)));
      req.destroy();
    };
    // It settles the attempt itself: some endings (a 101 answer, whose socket Node hands to
    // 'upgrade' listeners) raise neither 'response' nor 'error', and the attempt must still end.
    const deadline = setTimeout(timedOut, timeoutMs);
    const req = send(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        lookup: guardedLookup(allowPrivate) as never,
        timeout: timeoutMs,
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const ok = status >= 200 && status < 300;
        const retryAfter =
          status === 429 || status === 503 ? parseRetryAfter(res.headers['retry-after']) : null;
        const chunks: Buffer[] = [];
        let size = 0;
        let truncated = false;
        const finish = (): void => {
          const excerpt = Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES);
          done({
            ok,
            status,
            error: ok
              ? null
              : status >= 300 && status < 400
                ? `redirect ${status} not followed`
                : `HTTP ${status}`,
            retryAfterSeconds: retryAfter,
            outcome: ok ? 'SUCCEEDED' : 'HTTP_ERROR',
            responseBody: decoder.decode(excerpt),
            responseTruncated: truncated,
          });
          res.destroy();
        };
        answered = finish;
        res.on('data', (chunk: Buffer) => {
          if (settled) return;
          chunks.push(chunk);
          size += chunk.length;
          if (size > RESPONSE_EXCERPT_BYTES) {
            truncated = true;
            finish();
          }
        });
        res.on('end', finish);
        res.on('error', finish);
        res.on('close', finish);
      },
    );
    req.setTimeout(timeoutMs, timedOut);
    // A 101 (or any protocol switch) is not a 2xx: a failed attempt, its socket closed.
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      done({
        ...failure('HTTP_ERROR', `HTTP ${res.statusCode ?? 101} (protocol switch) is not a 2xx`),
        status: res.statusCode ?? 101,
      });
    });
    req.on('close', () => {
      if (answered !== null) answered();
      else done(failure('CONNECTION_ERROR', 'connection closed before a response'));
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (answered !== null) return answered();
      if (err.code === 'EBLOCKED') return done(failure('BLOCKED', 'target address is not allowed'));
      const outcome = err.code === 'ECONNREFUSED' ? 'CONNECTION_REFUSED' : 'CONNECTION_ERROR';
      done(failure(outcome, err.message.slice(0, 500)));
    });
    req.end(body);
  });
}

function parseRetryAfter(v: string | string[] | undefined): number | null {
  const s = Array.isArray(v) ? v[0] : v;
  if (s === undefined) return null;
  if (/^\d+$/.test(s.trim())) return Math.min(Number(s.trim()), 86_400);
  const at = Date.parse(s);
  return Number.isNaN(at)
    ? null
    : Math.max(0, Math.min(Math.ceil((at - Date.now()) / 1000), 86_400));
}
