import { Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ALL_SCOPES, ADMIN_SCOPES, isWriteScope, type Scope } from '../../common/api/scopes.js';
import type { RouteMeta } from '../../common/api/route-meta.js';
import { Clock } from '../../common/clock/clock.js';
import { DomainError } from '../../common/errors/domain-error.js';
import type { Credential } from '../../common/http/request-context.js';
import type { WorldName } from '../../common/environment.js';
import { ConfigService } from '../../config/config.service.js';
import {
  ApiKeyRepository,
  highestActiveTier,
  type ResolvedKey,
} from '../api-keys/api-key.repository.js';
import { UsersService } from '../users/users.service.js';
import { worldOfKey } from '../worlds/key-world.js';
import { WorldClocks } from '../worlds/world-clocks.service.js';
import { REPLAY_CACHE, type ReplayCache } from './replay-cache.js';
import type { SignedRequest } from './request-signature.js';
import { routeEnvironment } from '../../common/http/pipeline/environment.stage.js';
import { checkExpiry, refuseRevoked } from '../../common/http/pipeline/key-state.stage.js';
import { checkScopes } from '../../common/http/pipeline/scope.stage.js';
import { checkSignature } from '../../common/http/pipeline/signature.stage.js';
import { SessionTokensService } from './session-tokens.service.js';

export const REALTIME_PATH = '/api/v1/ws';
const REALTIME_META: RouteMeta = {
  auth: 'key',
  scopes: ['websocket'],
  lifecycle: { state: 'STABLE' },
  environment: 'any',
};

const KEY_FORMAT = /^svc_(live|test)_[0-9A-Za-z]{32}$/;
const LAST_USED_EVERY_MS = 60_000;

/** Scopes a first-party session holds: every non-admin scope, plus admin scopes for admins. */
const SESSION_SCOPES: Scope[] = ALL_SCOPES.filter(
  (s) => s !== 'env:paper' && !(ADMIN_SCOPES as readonly string[]).includes(s),
);

const ADMIN_SESSION_SCOPES: Scope[] = [...SESSION_SCOPES, ...ADMIN_SCOPES];

/** Writes for the verified-email rule: the SPEC's write scopes, and admin:write. */
const writes = (s: Scope): boolean => s === 'admin:write' || isWriteScope(s);

/**
 * The scopes of a user's session. Without a verified email it holds no write scope (SPEC: write
 * scopes require a verified email on the owning account), as a key of that user could not.
 */
function sessionScopes(admin: boolean, emailVerified: boolean): Scope[] {
  const all = admin ? ADMIN_SESSION_SCOPES : SESSION_SCOPES;
  return emailVerified ? all : all.filter((s) => !writes(s));
}

/**
 * The authentication part of the request pipeline, in SPEC order: credential -> key state ->
 * signature -> environment routing -> scope (each stage in src/common/http/pipeline/). It fills
 * `req.svc` for the handler or throws a DomainError; the realtime feed's auth message runs the
 * same stages. Routes declare what they need with @Endpoint (RouteMeta).
 */
@Injectable()
export class AccessPipeline {
  constructor(
    private readonly keys: ApiKeyRepository,
    private readonly sessions: SessionTokensService,
    private readonly users: UsersService,
    private readonly clock: Clock,
    private readonly config: ConfigService,
    @Inject(REPLAY_CACHE) private readonly replays: ReplayCache,
    private readonly clocks: WorldClocks,
  ) {}

  /**
   * Fills `req.svc` or throws (a rejected promise when it waited). A cached API key that needs no
   * signature is decided without a promise: no microtask hop per request on the hot routes.
   */
  authenticate(req: FastifyRequest, meta: RouteMeta): Promise<void> | void {
    refuseLiveKeyFromExplorer(req);
    if (meta.auth === 'public') return;
    const credential = this.credential(req, meta);
    if (credential === null || !(credential instanceof Promise)) {
      this.admit(req, meta, credential);
      return;
    }
    return credential.then((c) => this.admit(req, meta, c));
  }

  /** Environment routing and scope for the credential found (or the 401 for none). */
  private admit(req: FastifyRequest, meta: RouteMeta, credential: Credential | null): void {
    if (meta.auth === 'public') return;
    if (credential === null) {
      if (meta.auth === 'optional') return;
      throw new DomainError(
        'UNAUTHENTICATED',
        meta.auth === 'session'
          ? 'This operation needs a session token: Authorization: Bearer <token> from POST /api/v1/auth/login'
          : 'Send an API key in X-API-Key',
      );
    }
    if (meta.apiKeyOnly === true && credential.type !== 'API_KEY') {
      throw new DomainError(
        'API_KEY_REQUIRED',
        'This operation belongs to an API key; call it with X-API-Key',
      );
    }
    routeEnvironment(credential, meta, this.config.values.sandboxEnabled);
    checkScopes(credential, meta);
    req.svc.credential = credential;
    req.svc.userId = credential.userId;
    req.svc.environment = credential.environment;
    req.svc.world = credential.world;
  }

  /** Credential, key state and signature. */
  private credential(
    req: FastifyRequest,
    meta: RouteMeta,
  ): Credential | null | Promise<Credential | null> {
    const apiKey = req.headers['x-api-key'];
    const authz = req.headers.authorization;
    if (apiKey !== undefined && authz !== undefined) {
      throw new DomainError(
        'UNAUTHENTICATED',
        'Send one credential: X-API-Key or Authorization, not both',
      );
    }
    if (apiKey !== undefined) {
      // The key is checked first (an unknown, revoked or unsigned one is 401 whatever the route),
      // then its kind: a good key on a session-only operation is 403 SESSION_REQUIRED.
      const key = this.fromKey(Array.isArray(apiKey) ? apiKey[0] : apiKey, () => ({
        method: req.method,
        pathWithQuery: req.url,
        rawBody: req.rawBody,
        timestamp: header(req, 'x-svc-timestamp'),
        signature: header(req, 'x-svc-signature'),
      }));
      return key instanceof Promise ? key.then((k) => keyOnly(k, meta)) : keyOnly(key, meta);
    }
    if (authz !== undefined) return this.fromSession(authz);
    return null;
  }

  /**
   * The realtime feed's first message: the same credential, key state, signature, environment and
   * scope rules as HTTP, with `websocket` as the required scope. A signing-required key signs
   * `<timestamp>.GET./api/v1/ws.` (no body) and sends `timestamp` and `signature` in the message.
   */
  async authenticateRealtime(msg: {
    api_key?: unknown;
    token?: unknown;
    timestamp?: unknown;
    signature?: unknown;
  }): Promise<Credential> {
    let credential: Credential;
    if (msg.api_key !== undefined && msg.token !== undefined) {
      throw new DomainError('UNAUTHENTICATED', 'Send one credential: api_key or token, not both');
    }
    if (typeof msg.api_key === 'string') {
      credential = await this.fromKey(msg.api_key, () => ({
        method: 'GET',
        pathWithQuery: REALTIME_PATH,
        rawBody: undefined,
        timestamp:
          typeof msg.timestamp === 'string'
            ? msg.timestamp
            : msg.timestamp === undefined
              ? undefined
              : String(msg.timestamp),
        signature: typeof msg.signature === 'string' ? msg.signature : undefined,
      }));
    } else if (typeof msg.token === 'string') {
      credential = await this.fromSession(`Bearer ${msg.token}`);
    } else {
      throw new DomainError('UNAUTHENTICATED', 'The auth message needs api_key or token');
    }
    routeEnvironment(credential, REALTIME_META, this.config.values.sandboxEnabled);
    if (!credential.scopes.includes('websocket')) {
      throw new DomainError('INSUFFICIENT_SCOPE', 'The realtime feed needs the websocket scope', {
        required_scopes: ['websocket'],
        missing_scopes: ['websocket'],
      });
    }
    return credential;
  }

  /**
   * The key's credential: a cached key that needs no signature without a promise; a key read
   * from the database or one that signs (its replay check may wait) through one.
   */
  private fromKey(secret: string, signed: () => SignedRequest): Credential | Promise<Credential> {
    if (!KEY_FORMAT.test(secret)) throw unknownKey();
    const cached = this.keys.cached(secret);
    if (cached !== undefined) return this.keyCredential(cached, signed);
    return this.keys.bySecret(secret).then((resolved) => {
      if (resolved === null) throw unknownKey();
      return this.keyCredential(resolved, signed);
    });
  }

  /** Key state, then the signature of a key that requires one (SPEC order). */
  private keyCredential(
    resolved: ResolvedKey,
    signed: () => SignedRequest,
  ): Credential | Promise<Credential> {
    const key = resolved.entity;
    refuseRevoked(key);
    // A world key reaches its world only (its environment is test, so paper rules apply), and
    // its expiry and signature window read that world's clock, as all its time rules do.
    const world =
      key.worldId ?? worldOfKey({ environment: key.environment, scopes: resolved.scopes });
    const now = this.clocks.for(world).now();
    const expiresAt = checkExpiry(key, now);
    if (!key.signingRequired) {
      this.touch(resolved, now);
      return this.keyOf(resolved, world, expiresAt);
    }
    return checkSignature(key, resolved.signingSecret, signed(), now, this.replays).then(() => {
      this.touch(resolved, now);
      return this.keyOf(resolved, world, expiresAt);
    });
  }

  private keyOf(resolved: ResolvedKey, world: WorldName, expiresAt: number | null): Credential {
    const key = resolved.entity;
    return {
      type: 'API_KEY',
      userId: key.userId,
      keyId: key.id,
      environment: worldOfKey({ environment: key.environment, scopes: resolved.scopes }),
      world,
      scopes: resolved.scopes,
      tier: key.tier,
      expiresAt,
    };
  }

  private async fromSession(authz: string): Promise<Credential> {
    const m = /^Bearer\s+(\S+)$/i.exec(authz.trim());
    const claims = m === null ? null : this.sessions.verify(m[1]);
    if (claims === null)
      throw new DomainError('UNAUTHENTICATED', 'Invalid or expired session token');
    const user = await this.users.byId(claims.sub);
    if (user === null) throw new DomainError('UNAUTHENTICATED', 'Invalid or expired session token');
    const tier = await highestActiveTier(
      this.keys.repo,
      user.id,
      this.clock.nowDate().toISOString(),
    );
    return {
      type: 'SESSION',
      userId: user.id,
      keyId: null,
      environment: 'live',
      world: 'live',
      scopes: sessionScopes(this.users.isAdmin(user), user.emailVerified),
      tier,
      expiresAt: claims.exp * 1000,
      ...(user.emailVerified
        ? {}
        : { scopesIfVerified: sessionScopes(this.users.isAdmin(user, true), true) }),
    };
  }

  /** last_used_at, written at most once a minute per key and never on the request's path. */
  private touch(resolved: ResolvedKey, now: number): void {
    const key = resolved.entity;
    // last_used_at as epoch ms, parsed once per cached resolution rather than on every request.
    resolved.lastUsedMs ??= key.lastUsedAt === null ? null : Date.parse(key.lastUsedAt);
    const last = resolved.lastUsedMs;
    if (last !== null && now - last < LAST_USED_EVERY_MS) return;
    const at = new Date(now).toISOString();
    key.lastUsedAt = at; // the cached entity: the next request sees it without a read
    resolved.lastUsedMs = now;
    void this.keys.repo.update({ id: key.id }, { lastUsedAt: at }).catch(() => undefined);
  }
}

/** The header the API Explorer marks its requests with (CONTRACT.md "Browser pages"). */
export const EXPLORER_CLIENT = { header: 'svc-client', value: 'api-explorer' } as const;

/**
 * The Explorer offers the paper engine only: a request it marks that carries a live key is
 * refused before the key is looked up, on every route (public ones too), so a live key typed into
 * the page is never used for anything, whichever way it got past the page's own check.
 */
function refuseLiveKeyFromExplorer(req: FastifyRequest): void {
  const client = header(req, EXPLORER_CLIENT.header);
  if (client === undefined || client.trim().toLowerCase() !== EXPLORER_CLIENT.value) return;
  const key = header(req, 'x-api-key');
  if (key !== undefined && key.trim().startsWith('svc_live_')) {
    throw new DomainError(
      'LIVE_KEY_EXPLORER',
      'The API Explorer takes test keys (svc_test_...) only: live keys cannot be used from it',
    );
  }
}

function unknownKey(): DomainError {
  return new DomainError('UNAUTHENTICATED', 'Unknown or malformed API key');
}

/** A good key on a session-only operation: 403 SESSION_REQUIRED (after the key's own checks). */
function keyOnly(key: Credential, meta: RouteMeta): Credential {
  if (meta.auth === 'session') {
    throw new DomainError(
      'SESSION_REQUIRED',
      'API keys cannot manage keys or security settings; use a session token (POST /api/v1/auth/login)',
    );
  }
  return key;
}

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}
