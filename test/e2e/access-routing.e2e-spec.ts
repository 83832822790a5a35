import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyRequest } from 'fastify';
import { STABLE } from '../../src/common/api/lifecycle.js';
import type { EnvironmentRule, RouteMeta } from '../../src/common/api/route-meta.js';
import type { Scope } from '../../src/common/api/scopes.js';
import { ManualClock } from '../../src/common/clock/clock.js';
import { DomainError } from '../../src/common/errors/domain-error.js';
import { newRequestContext } from '../../src/common/http/request-context.js';
import type { ConfigService } from '../../src/config/config.service.js';
import { AccessPipeline } from '../../src/modules/access/access.pipeline.js';
import type { WorldClocks } from '../../src/modules/worlds/world-clocks.service.js';
import { MemoryReplayCache } from '../../src/modules/access/replay-cache.js';
import type { SessionTokensService } from '../../src/modules/access/session-tokens.service.js';
import type {
  ApiKeyRepository,
  ResolvedKey,
} from '../../src/modules/api-keys/api-key.repository.js';
import type { ApiKeyEntity } from '../../src/modules/api-keys/entities/api-key.entity.js';
import type { UsersService } from '../../src/modules/users/users.service.js';
import {
  asKey,
  createKey,
  createKeyRaw,
  login,
  meWithKey,
  READ_SCOPES,
  startAccessApp,
  TRADER,
  verifiedAccount,
} from '../support/access.js';
import { expectError, http, startApp, type Running } from '../support/harness.js';

/**
 * One app on the defaults (APP_ENV development) for the cases that only add keys of their own and
 * compare what they read before and after; boots with other settings are their own.
 */
let defaults: Running;
beforeAll(async () => {
  defaults = await startAccessApp();
});
afterAll(async () => {
  await defaults.close();
});

describe('environment routing: test keys and env:paper are served by the paper engine', () => {
  let svc: Running;
  let session: string;
  beforeAll(async () => {
    svc = defaults;
    session = await login(svc, TRADER);
  });

  it('a test key is environment test, a live key live, a live key with env:paper test', async () => {
    const test = await createKey(svc, session, { name: 't', environment: 'test' });
    const live = await createKey(svc, session, { name: 'l', environment: 'live' });
    const paper = await createKey(svc, session, {
      name: 'lp',
      environment: 'live',
      scopes: ['markets:read', 'env:paper'],
    });
    expect(paper.key.startsWith('svc_live_')).toBe(true);
    expect((await meWithKey(svc, test.key)).body.credential.environment).toBe('test');
    expect((await meWithKey(svc, live.key)).body.credential.environment).toBe('live');
    expect((await meWithKey(svc, paper.key)).body.credential).toMatchObject({
      environment: 'test',
      scopes: ['markets:read', 'env:paper'],
    });
    // A session is never paper.
    expect(
      (await http(`${svc.api}/auth/me`, { headers: { authorization: `Bearer ${session}` } })).body
        .credential.environment,
    ).toBe('live');
    // Each reaches the markets list of its engine.
    for (const k of [test, live, paper]) {
      expect((await asKey(k.key, `${svc.api}/markets?limit=1`)).status).toBe(200);
    }
  });
});

describe('environment routing on real-money and sandbox-only routes (e2e)', () => {
  let svc: Running;
  let session: string;
  const WRITE = { scopes: ['wallet:read', 'wallet:write'], acknowledge_write_scopes: true };
  const post = (key: string, path: string, json: unknown) =>
    asKey(key, `${svc.api}${path}`, { method: 'POST', json });
  beforeAll(async () => {
    svc = defaults;
    session = await login(svc, TRADER);
  });

  it('a test key and an env:paper key on a real-money route are 403 TEST_KEY_LIVE_ENDPOINT; a live key passes', async () => {
    const test = await createKey(svc, session, { name: 't', environment: 'test', ...WRITE });
    const paper = await createKey(svc, session, {
      name: 'p',
      environment: 'live',
      ...WRITE,
      scopes: [...WRITE.scopes, 'env:paper'],
    });
    const live = await createKey(svc, session, { name: 'l', environment: 'live', ...WRITE });
    const liveWallet = async () => (await asKey(live.key, `${svc.api}/wallet`)).body;
    const before = await liveWallet();
    for (const k of [test, paper]) {
      for (const path of ['/wallet/deposits', '/wallet/withdrawals']) {
        expectError(await post(k.key, path, { amount_cents: 500 }), 403, 'TEST_KEY_LIVE_ENDPOINT');
      }
    }
    expect(await liveWallet()).toEqual(before);
    // Routing comes before scope: a test key without wallet:write hears the routing answer.
    const readOnly = await createKey(svc, session, { name: 'ro', environment: 'test' });
    expectError(
      await post(readOnly.key, '/wallet/deposits', { amount_cents: 500 }),
      403,
      'TEST_KEY_LIVE_ENDPOINT',
    );
    const dep = await post(live.key, '/wallet/deposits', { amount_cents: 500 });
    expect(dep.status).toBe(201);
    expect((await liveWallet()).balance_cents).toBe(before.balance_cents + 500);
  });

  it('a live key and a session on a sandbox-only route are 403 LIVE_KEY_SANDBOX_ENDPOINT; a test key passes', async () => {
    const live = await createKey(svc, session, { name: 'l2', environment: 'live', ...WRITE });
    const test = await createKey(svc, session, { name: 't2', environment: 'test', ...WRITE });
    expectError(
      await post(live.key, '/sandbox/wallet/fund', { amount_cents: 500 }),
      403,
      'LIVE_KEY_SANDBOX_ENDPOINT',
    );
    expectError(
      await http(`${svc.api}/sandbox/wallet/fund`, {
        method: 'POST',
        headers: { authorization: `Bearer ${session}` },
        json: { amount_cents: 500 },
      }),
      403,
      'LIVE_KEY_SANDBOX_ENDPOINT',
    );
    const paperBefore = (await asKey(test.key, `${svc.api}/wallet`)).body.balance_cents as number;
    const fund = await post(test.key, '/sandbox/wallet/fund', { amount_cents: 500 });
    expect(fund.status).toBe(201);
    expect((await asKey(test.key, `${svc.api}/wallet`)).body.balance_cents).toBe(paperBefore + 500);
  });
});

/** The three ways the sandbox is off. */
const SANDBOX_OFF: [string, Record<string, string>][] = [
  ['DEVELOPER_SANDBOX_ENABLED=false', { DEVELOPER_SANDBOX_ENABLED: 'false' }],
  // Production refuses RATE_LIMITS_ENABLED=false, so this boot keeps the limits on.
  ['APP_ENV=production (off by default)', { APP_ENV: 'production', RATE_LIMITS_ENABLED: 'true' }],
  ['APP_ENV=staging + SANDBOX_PINNED_OFF=true', { APP_ENV: 'staging', SANDBOX_PINNED_OFF: 'true' }],
];

describe.each(SANDBOX_OFF)('sandbox off (%s): 403 SANDBOX_DISABLED', (_label, offEnv) => {
  let dataDir: string;
  let test: { id: string; key: string };
  let paper: { id: string; key: string };
  let live: { id: string; key: string };
  let testWriter: { id: string; key: string };
  let svc: Running | undefined;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'svc-e2e-sandbox-'));
    // Keys minted while the sandbox is on (APP_ENV staging: on by default) ...
    const on = await startAccessApp({ dataDir, env: { APP_ENV: 'staging' } });
    const s = await login(on, TRADER);
    test = await createKey(on, s, { name: 'test-before', environment: 'test' });
    paper = await createKey(on, s, {
      name: 'paper-before',
      environment: 'live',
      scopes: ['markets:read', 'env:paper'],
    });
    live = await createKey(on, s, {
      name: 'live-before',
      environment: 'live',
      scopes: [...READ_SCOPES, 'wallet:write'],
      acknowledge_write_scopes: true,
    });
    testWriter = await createKey(on, s, {
      name: 'test-writer-before',
      environment: 'test',
      scopes: ['wallet:read', 'wallet:write'],
      acknowledge_write_scopes: true,
    });
    expect((await meWithKey(on, test.key)).status).toBe(200);
    await on.close({ keepData: true });
    // ... then the same data directory restarted with the sandbox off.
    svc = await startAccessApp({ dataDir, env: offEnv });
  });
  afterAll(async () => {
    await svc?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('an existing test key (and an env:paper key) is refused on every route', async () => {
    for (const k of [test, paper]) {
      const me = expectError(await meWithKey(svc!, k.key), 403, 'SANDBOX_DISABLED');
      expect(JSON.stringify(me)).not.toContain(k.key);
      expectError(await asKey(k.key, `${svc!.api}/markets?limit=1`), 403, 'SANDBOX_DISABLED');
    }
    // Live keys are unaffected.
    const me = await meWithKey(svc!, live.key);
    expect(me.status).toBe(200);
    expect(me.body.credential).toMatchObject({ environment: 'live' });
  });

  it('paper endpoints answer SANDBOX_DISABLED to test keys and to live keys alike', async () => {
    for (const k of [testWriter, live]) {
      expectError(
        await asKey(k.key, `${svc!.api}/sandbox/wallet/fund`, {
          method: 'POST',
          json: { amount_cents: 500 },
        }),
        403,
        'SANDBOX_DISABLED',
      );
    }
  });

  it('creating a test key is refused and creates nothing; live keys can still be created', async () => {
    const s = await login(svc!, TRADER);
    const before = (
      await http(`${svc!.api}/api-keys`, { headers: { authorization: `Bearer ${s}` } })
    ).body.data.length;
    expectError(
      await createKeyRaw(svc!, s, { name: 'test-after', environment: 'test' }),
      403,
      'SANDBOX_DISABLED',
    );
    // A live key asking for env:paper would be paper-only: refused the same way.
    expectError(
      await createKeyRaw(svc!, s, {
        name: 'paper-after',
        environment: 'live',
        scopes: ['markets:read', 'env:paper'],
      }),
      403,
      'SANDBOX_DISABLED',
    );
    const after = await http(`${svc!.api}/api-keys`, { headers: { authorization: `Bearer ${s}` } });
    expect(after.body.data.length).toBe(before);
    const liveKey = await createKey(svc!, s, { name: 'live-after', environment: 'live' });
    expect((await meWithKey(svc!, liveKey.key)).body.credential.environment).toBe('live');
  });

  it('rotating a test (or env:paper) key mints nothing: 403 SANDBOX_DISABLED, the key unchanged', async () => {
    const s = await login(svc!, TRADER);
    for (const k of [test, paper]) {
      const res = await http(`${svc!.api}/api-keys/${k.id}/rotate`, {
        method: 'POST',
        headers: { authorization: `Bearer ${s}` },
      });
      expect(expectError(res, 403, 'SANDBOX_DISABLED').message).toMatch(/cannot be rotated/);
      expect(res.text).not.toMatch(/svc_test_|svc_live_/);
      // The old secret still names the key (refused for the sandbox, not unknown).
      expectError(await meWithKey(svc!, k.key), 403, 'SANDBOX_DISABLED');
    }
    const rotated = await http(`${svc!.api}/api-keys/${live.id}/rotate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s}` },
    });
    expect(rotated.status).toBe(200);
    live = { id: live.id, key: rotated.body.key as string };
  });
});

describe('sandbox defaults by APP_ENV', () => {
  it('staging and development mint test keys; production with DEVELOPER_SANDBOX_ENABLED=true does too', async () => {
    const envs: Record<string, string>[] = [
      { APP_ENV: 'staging' },
      // The default: the shared app.
      { APP_ENV: 'development' },
      { APP_ENV: 'production', DEVELOPER_SANDBOX_ENABLED: 'true', RATE_LIMITS_ENABLED: 'true' },
    ];
    for (const env of envs) {
      const svc = env.APP_ENV === 'development' ? defaults : await startAccessApp({ env });
      try {
        // Production seeds no demo account: a registered, verified one there.
        const token =
          env.APP_ENV === 'production'
            ? await verifiedAccount(svc, 'sandbox@routing.test')
            : await login(svc, TRADER);
        const k = await createKey(svc, token, { environment: 'test' });
        expect((await meWithKey(svc, k.key)).body.credential.environment).toBe('test');
      } finally {
        if (svc !== defaults) await svc.close();
      }
    }
  });

  it('SANDBOX_PINNED_OFF wins over DEVELOPER_SANDBOX_ENABLED=true', async () => {
    const svc = await startApp({
      env: {
        APP_ENV: 'staging',
        DEVELOPER_SANDBOX_ENABLED: 'true',
        SANDBOX_PINNED_OFF: 'true',
        RATE_LIMITS_ENABLED: 'false',
      },
    });
    try {
      expectError(
        await createKeyRaw(svc, await login(svc, TRADER), { name: 't', environment: 'test' }),
        403,
        'SANDBOX_DISABLED',
      );
    } finally {
      await svc.close();
    }
  });
});

/**
 * The same routing rules on the pipeline itself, with minimal fakes around the real
 * AccessPipeline: every combination of credential, route rule and sandbox flag, independent of
 * which real-money and sandbox-only routes exist.
 */
describe('AccessPipeline environment routing (unit, fakes)', () => {
  const clock = new ManualClock('2026-11-22T12:00:00.000Z');
  const USER = 'usr_routing';

  function keyFor(environment: 'live' | 'test', scopes: Scope[]): ResolvedKey {
    const entity = {
      id: `key_${environment}${scopes.length}`,
      userId: USER,
      name: 'k',
      environment,
      prefix: `svc_${environment}_Ab12`,
      secretHash: 'h',
      scopes: scopes.join(','),
      tier: 'FREE',
      expiresAt: null,
      signingRequired: false,
      signingSecretEnc: null,
      createdAt: '2026-11-22T12:00:00.000Z',
      rotatedAt: null,
      lastUsedAt: '2026-11-22T12:00:00.000Z',
      revokedAt: null,
    } as ApiKeyEntity;
    return { entity, scopes, signingSecret: null };
  }

  const SECRETS = {
    test: `svc_test_${'T'.repeat(32)}`,
    live: `svc_live_${'L'.repeat(32)}`,
    paper: `svc_live_${'P'.repeat(32)}`,
    liveNoScope: `svc_live_${'N'.repeat(32)}`,
    revoked: `svc_test_${'R'.repeat(32)}`,
    expired: `svc_test_${'E'.repeat(32)}`,
    signing: `svc_test_${'S'.repeat(32)}`,
    touched: `svc_test_${'W'.repeat(32)}`,
  };
  const KEYS: Record<string, ResolvedKey> = {
    [SECRETS.test]: keyFor('test', ['wallet:write', 'env:paper']),
    [SECRETS.live]: keyFor('live', ['wallet:write']),
    [SECRETS.paper]: keyFor('live', ['wallet:write', 'env:paper']),
    [SECRETS.liveNoScope]: keyFor('live', ['markets:read']),
    [SECRETS.revoked]: {
      ...keyFor('test', ['wallet:write']),
      entity: { ...keyFor('test', []).entity, revokedAt: '2026-11-22T11:00:00.000Z' },
    },
    [SECRETS.expired]: {
      ...keyFor('test', ['wallet:write']),
      entity: { ...keyFor('test', []).entity, expiresAt: '2026-11-22T11:00:00.000Z' },
    },
    // Signing required, no signature sent: 401 SIGNATURE_REQUIRED (the signature stage waits).
    [SECRETS.signing]: {
      ...keyFor('test', ['wallet:write']),
      entity: { ...keyFor('test', []).entity, signingRequired: true },
      signingSecret: 'whsec',
    },
    [SECRETS.touched]: keyFor('test', ['wallet:read']),
  };
  /** last_used_at writes the fakes were asked for: [key id, changes]. */
  const touches: [unknown, unknown][] = [];

  /** `cached`: whether the keys are in the repository's cache (read without a promise). */
  function pipeline(sandboxEnabled: boolean, cached = true): AccessPipeline {
    const keys = {
      bySecret: async (s: string) => KEYS[s] ?? null,
      cached: (s: string): ResolvedKey | undefined => (cached ? KEYS[s] : undefined),
      repo: {
        update: async (where: unknown, changes: unknown) => {
          touches.push([where, changes]);
        },
        // highestActiveTier: the user's active keys (none here).
        createQueryBuilder: () => {
          const qb = {
            select: () => qb,
            where: () => qb,
            andWhere: () => qb,
            getMany: async () => [],
          };
          return qb;
        },
      },
    } as unknown as ApiKeyRepository;
    const sessions = {
      verify: (t: string) =>
        t === 'session-token' ? { sub: USER, iat: 0, exp: 9e9, typ: 'session', jti: 'j' } : null,
    } as unknown as SessionTokensService;
    const users = {
      byId: async (id: string) => (id === USER ? { id, roles: '', emailVerified: true } : null),
      isAdmin: () => false,
    } as unknown as UsersService;
    const config = { values: { sandboxEnabled } } as unknown as ConfigService;
    // No world keys here: every key reads the service clock.
    const clocks = { for: () => clock } as unknown as WorldClocks;
    return new AccessPipeline(
      keys,
      sessions,
      users,
      clock,
      config,
      new MemoryReplayCache(clock),
      clocks,
    );
  }

  function request(headers: Record<string, string>): FastifyRequest {
    return {
      headers,
      method: 'POST',
      url: '/api/v1/wallet/withdrawals',
      svc: newRequestContext(),
    } as unknown as FastifyRequest;
  }

  const meta = (environment: EnvironmentRule, scopes: Scope[] = ['wallet:write']): RouteMeta => ({
    auth: 'key',
    scopes,
    lifecycle: STABLE,
    environment,
  });

  async function codeOf(p: AccessPipeline, headers: Record<string, string>, m: RouteMeta) {
    try {
      await p.authenticate(request(headers), m);
      return 'OK';
    } catch (err) {
      if (err instanceof DomainError) return `${err.status} ${err.code}`;
      throw err;
    }
  }

  it('real-money routes refuse test keys and env:paper keys with 403 TEST_KEY_LIVE_ENDPOINT', async () => {
    const p = pipeline(true);
    expect(await codeOf(p, { 'x-api-key': SECRETS.test }, meta('real-money'))).toBe(
      '403 TEST_KEY_LIVE_ENDPOINT',
    );
    expect(await codeOf(p, { 'x-api-key': SECRETS.paper }, meta('real-money'))).toBe(
      '403 TEST_KEY_LIVE_ENDPOINT',
    );
    expect(await codeOf(p, { 'x-api-key': SECRETS.live }, meta('real-money'))).toBe('OK');
    expect(await codeOf(p, { authorization: 'Bearer session-token' }, meta('real-money'))).toBe(
      'OK',
    );
    // Routing comes before scope: a test key without the scope still hears the routing answer.
    expect(
      await codeOf(p, { 'x-api-key': SECRETS.test }, meta('real-money', ['orders:write'])),
    ).toBe('403 TEST_KEY_LIVE_ENDPOINT');
  });

  it('sandbox-only routes refuse live keys and sessions with 403 LIVE_KEY_SANDBOX_ENDPOINT', async () => {
    const p = pipeline(true);
    expect(await codeOf(p, { 'x-api-key': SECRETS.live }, meta('sandbox-only'))).toBe(
      '403 LIVE_KEY_SANDBOX_ENDPOINT',
    );
    expect(await codeOf(p, { authorization: 'Bearer session-token' }, meta('sandbox-only'))).toBe(
      '403 LIVE_KEY_SANDBOX_ENDPOINT',
    );
    expect(await codeOf(p, { 'x-api-key': SECRETS.test }, meta('sandbox-only'))).toBe('OK');
    expect(await codeOf(p, { 'x-api-key': SECRETS.paper }, meta('sandbox-only'))).toBe('OK');
  });

  it('with the sandbox off, paper credentials and sandbox-only routes are 403 SANDBOX_DISABLED', async () => {
    const p = pipeline(false);
    for (const m of [meta('any', []), meta('real-money'), meta('sandbox-only')]) {
      expect(await codeOf(p, { 'x-api-key': SECRETS.test }, m)).toBe('403 SANDBOX_DISABLED');
      expect(await codeOf(p, { 'x-api-key': SECRETS.paper }, m)).toBe('403 SANDBOX_DISABLED');
    }
    expect(await codeOf(p, { 'x-api-key': SECRETS.live }, meta('sandbox-only'))).toBe(
      '403 SANDBOX_DISABLED',
    );
    expect(await codeOf(p, { 'x-api-key': SECRETS.live }, meta('real-money'))).toBe('OK');
  });

  it('a cached key is decided without a promise, by the same rules as a key read from the database', async () => {
    const cases: [Record<string, string>, RouteMeta][] = [];
    const secrets = [...Object.values(SECRETS), 'svc_test_short', `svc_test_${'U'.repeat(32)}`];
    const metas = [
      meta('real-money'),
      meta('sandbox-only'),
      meta('any', ['orders:write']),
      { ...meta('any', []), auth: 'session' as const },
    ];
    for (const key of secrets) for (const m of metas) cases.push([{ 'x-api-key': key }, m]);
    const codes = async (p: AccessPipeline) => {
      const out: string[] = [];
      for (const [headers, m] of cases) out.push(await codeOf(p, headers, m));
      return out;
    };
    const fromCache = await codes(pipeline(true, true));
    expect(fromCache).toEqual(await codes(pipeline(true, false)));
    // The matrix reaches every stage: key state, signature, routing, scope, the key's kind.
    for (const code of [
      'OK',
      '401 UNAUTHENTICATED',
      '401 API_KEY_REVOKED',
      '401 API_KEY_EXPIRED',
      '401 SIGNATURE_REQUIRED',
      '403 TEST_KEY_LIVE_ENDPOINT',
      '403 LIVE_KEY_SANDBOX_ENDPOINT',
      '403 INSUFFICIENT_SCOPE',
      '403 SESSION_REQUIRED',
    ]) {
      expect(fromCache).toContain(code);
    }
    // The credential a cached key fills in is the one a read key fills in.
    const filled = async (p: AccessPipeline) => {
      const req = request({ 'x-api-key': SECRETS.test });
      const pending = p.authenticate(req, meta('sandbox-only'));
      return { sync: pending === undefined, svc: (await pending, req.svc) };
    };
    const sync = await filled(pipeline(true, true));
    const read = await filled(pipeline(true, false));
    expect(sync.sync).toBe(true); // no promise: the hot path
    expect(read.sync).toBe(false);
    expect(sync.svc).toEqual(read.svc);
    expect(sync.svc.world).toBe('test');
  });

  it('last_used_at is written at most once a minute per key, cached or read', async () => {
    const key = KEYS[SECRETS.touched].entity;
    const ofKey = () => touches.filter(([where]) => (where as { id: string }).id === key.id);
    const use = (p: AccessPipeline) => codeOf(p, { 'x-api-key': SECRETS.touched }, meta('any', []));
    const start = clock.now();
    expect(await use(pipeline(true, false))).toBe('OK'); // last used at the clock's start
    expect(ofKey()).toHaveLength(0);
    clock.advance(59_000);
    expect(await use(pipeline(true, true))).toBe('OK');
    expect(ofKey()).toHaveLength(0);
    clock.advance(1_000);
    expect(await use(pipeline(true, true))).toBe('OK');
    expect(ofKey()).toEqual([
      [{ id: key.id }, { lastUsedAt: new Date(start + 60_000).toISOString() }],
    ]);
    clock.advance(59_999);
    expect(await use(pipeline(true, true))).toBe('OK');
    expect(await use(pipeline(true, false))).toBe('OK');
    expect(ofKey()).toHaveLength(1);
    clock.advance(1);
    expect(await use(pipeline(true, true))).toBe('OK');
    expect(ofKey()).toHaveLength(2);
  });

  it('scope comes after routing: a live key on a real-money route without the scope is 403 INSUFFICIENT_SCOPE', async () => {
    const p = pipeline(true);
    expect(await codeOf(p, { 'x-api-key': SECRETS.liveNoScope }, meta('real-money'))).toBe(
      '403 INSUFFICIENT_SCOPE',
    );
  });
});
