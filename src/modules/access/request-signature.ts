import { DomainError } from '../../common/errors/domain-error.js';
import { hmacSha256Hex, safeEqual } from '../../common/crypto/tokens.js';

export const SIGNATURE_SKEW_SECONDS = 300;

export interface SignedRequest {
  method: string;
  /** The request target exactly as sent: path plus query string. */
  pathWithQuery: string;
  rawBody: Buffer | undefined;
  timestamp: string | undefined;
  signature: string | undefined;
}

/** `<unix_ts>.<METHOD>.<path>.` followed by the raw body bytes. */
export function signingPayload(
  ts: string,
  method: string,
  pathWithQuery: string,
  body: Buffer | undefined,
): Buffer {
  const head = Buffer.from(`${ts}.${method.toUpperCase()}.${pathWithQuery}.`, 'utf8');
  return body === undefined || body.length === 0 ? head : Buffer.concat([head, body]);
}

/** Computes the `v1=<hex>` header value a client sends. */
export function signRequest(
  secret: string,
  ts: string,
  method: string,
  pathWithQuery: string,
  body?: Buffer,
): string {
  return `v1=${hmacSha256Hex(secret, signingPayload(ts, method, pathWithQuery, body))}`;
}

/** A signature that verified: its timestamp and its canonical `v1=<hex>` value. */
export interface VerifiedSignature {
  timestamp: number;
  signature: string;
  /** Until when (epoch ms) the same signature would still pass the skew check. */
  replayableUntilMs: number;
}

/**
 * Verifies X-Svc-Timestamp / X-Svc-Signature for a signing-required key, or throws
 * SIGNATURE_REQUIRED, SIGNATURE_TIMESTAMP_SKEW or SIGNATURE_INVALID. Whether the signature was
 * already used is the replay cache's question (see AccessPipeline).
 */
export function verifyRequestSignature(
  req: SignedRequest,
  secret: string,
  nowSeconds: number,
): VerifiedSignature {
  if (req.timestamp === undefined || req.signature === undefined) {
    throw new DomainError(
      'SIGNATURE_REQUIRED',
      'This key requires signed requests: send X-Svc-Timestamp and X-Svc-Signature',
    );
  }
  if (!/^\d{1,12}$/.test(req.timestamp)) {
    throw new DomainError('SIGNATURE_INVALID', 'X-Svc-Timestamp must be unix seconds');
  }
  const skew = Number(req.timestamp) - nowSeconds;
  if (Math.abs(skew) > SIGNATURE_SKEW_SECONDS) {
    throw new DomainError(
      'SIGNATURE_TIMESTAMP_SKEW',
      `X-Svc-Timestamp is ${Math.abs(skew)} s ${skew < 0 ? 'behind' : 'ahead of'} the server clock; the window is +/-${SIGNATURE_SKEW_SECONDS} s`,
      { server_time: nowSeconds, skew_seconds: skew, window_seconds: SIGNATURE_SKEW_SECONDS },
    );
  }
  const expected = signRequest(secret, req.timestamp, req.method, req.pathWithQuery, req.rawBody);
  if (!safeEqual(expected, req.signature.trim())) {
    throw new DomainError(
      'SIGNATURE_INVALID',
      'X-Svc-Signature does not match: sign "<ts>.<METHOD>.<path with query>." + raw body with HMAC-SHA256 (hex), sent as v1=<hex>',
    );
  }
  const timestamp = Number(req.timestamp);
  // Accepted while the server clock's whole second is at most ts + 300: up to the end of it.
  return {
    timestamp,
    signature: expected,
    replayableUntilMs: (timestamp + SIGNATURE_SKEW_SECONDS + 1) * 1000,
  };
}
