import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { Scope } from '../api/scopes.js';
import type { Environment, WorldName } from '../environment.js';

export type Tier = 'FREE' | 'PRO' | 'ENTERPRISE';

/** An authenticated credential: an API key, or a first-party session token. */
export interface Credential {
  type: 'API_KEY' | 'SESSION';
  userId: string;
  /** The API key id; null for a session. */
  keyId: string | null;
  environment: Environment;
  /**
   * The world the credential reads and writes: `environment` for most keys, the ephemeral
   * world's id for a world key (whose environment is `test`).
   */
  world: WorldName;
  scopes: Scope[];
  tier: Tier;
  /** When the credential expires (epoch ms): the API key's expiry or the session token's `exp`; null for a key without expiry. */
  expiresAt?: number | null;
  /**
   * Set only on a session of a user whose email is not verified (which holds no write scope):
   * the scopes it would hold once the email is verified, admin ones included.
   */
  scopesIfVerified?: Scope[];
  /**
   * This request's Idempotency-Key, scoped to its owner, when it is a mutation sent with one (set
   * by the idempotency step; the credential object is per request). Engine commands run under it
   * record their effect with it; the claim (its id, and when the key's use began, epoch ms)
   * tells the engine writer this request's commands from another request's under the key.
   */
  idempotency?: { ownerId: string; key: string; claimId?: string; claimedAt?: number };
  /**
   * Set by the scenario step when a sandbox PARTIAL_FILL scenario fired for this request: the
   * order it places takes at most `fillLimit` contracts, the rest is cancelled (SCENARIO).
   */
  scenario?: { id: string; fillLimit: number };
}

/** What the request pipeline learned about the caller; handlers read it, never the headers. */
export interface RequestContext {
  /** Which engine serves this request: `test` for test keys and env:paper keys. */
  environment: Environment;
  /** Which world serves it: `environment`, or an ephemeral world's id for a world key. */
  world: WorldName;
  /** Set once a credential has been authenticated. */
  userId: string | null;
  credential: Credential | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    svc: RequestContext;
  }
}

export function newRequestContext(): RequestContext {
  return { environment: 'live', world: 'live', userId: null, credential: null };
}

/** Handler parameter: the request's {@link RequestContext}. */
export const Ctx = createParamDecorator(
  (_data: unknown, ctx: ExecutionContext): RequestContext =>
    ctx.switchToHttp().getRequest<FastifyRequest>().svc,
);
