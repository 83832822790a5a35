import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Clock } from '../../common/clock/clock.js';
import { signJwt, verifyJwt, type JwtClaims } from '../../common/crypto/jwt.js';
import { ConfigService } from '../../config/config.service.js';

export const SESSION_TTL_SECONDS = 12 * 3600;

/** First-party session JWTs (HS256 under the service's JWT secret), valid 12 hours. */
@Injectable()
export class SessionTokensService {
  constructor(
    private readonly config: ConfigService,
    private readonly clock: Clock,
  ) {}

  issue(userId: string): { token: string; expiresAt: string } {
    const iat = this.clock.nowSeconds();
    const claims: JwtClaims = {
      sub: userId,
      iat,
      exp: iat + SESSION_TTL_SECONDS,
      typ: 'session',
      jti: randomBytes(9).toString('base64url'),
    };
    return {
      token: signJwt(claims, this.config.secrets.jwtSecret),
      expiresAt: new Date(claims.exp * 1000).toISOString(),
    };
  }

  verify(token: string): JwtClaims | null {
    const claims = verifyJwt(token, this.config.secrets.jwtSecret, this.clock.nowSeconds());
    return claims !== null && claims.typ === 'session' ? claims : null;
  }
}
