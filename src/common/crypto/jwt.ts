import { createHmac } from 'node:crypto';
import { safeEqual } from './tokens.js';

export interface JwtClaims {
  sub: string;
  iat: number;
  exp: number;
  typ: string;
  jti: string;
}

const HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');

/** Minimal HS256 JWT (RFC 7519) for first-party session tokens; no other algorithm is accepted. */
export function signJwt(claims: JwtClaims, secret: string): string {
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  const sig = createHmac('sha256', secret).update(`${HEADER}.${payload}`).digest('base64url');
  return `${HEADER}.${payload}.${sig}`;
}

/** The claims when the token is well-formed, HS256, correctly signed and unexpired; else null. */
export function verifyJwt(token: string, secret: string, nowSeconds: number): JwtClaims | null {
  const parts = token.split('.');
  if (parts.length !== 3 || parts[0] !== HEADER) return null;
  const expected = createHmac('sha256', secret)
    .update(`${parts[0]}.${parts[1]}`)
    .digest('base64url');
  if (!safeEqual(expected, parts[2])) return null;
  let claims: Partial<JwtClaims>;
  try {
    claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8')) as Partial<JwtClaims>;
  } catch {
    return null;
  }
  if (
    typeof claims.sub !== 'string' ||
    typeof claims.exp !== 'number' ||
    claims.exp <= nowSeconds
  ) {
    return null;
  }
  return claims as JwtClaims;
}
