import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { ConfigError, loadConfig } from './app-config.js';

/** Asserts that loading this environment fails with a ConfigError naming the variable. */
function expectRefused(env: Record<string, string>, variable: string): ConfigError {
  let caught: unknown;
  try {
    loadConfig(env);
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(ConfigError);
  const err = caught as ConfigError;
  expect(err.variable).toBe(variable);
  expect(err.message).toContain(variable);
  return err;
}

describe('loadConfig', () => {
  it('has the documented defaults for an empty environment', () => {
    expect(loadConfig({})).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      dataDir: './data',
      appEnv: 'development',
      sandboxEnabled: true,
      sandboxPinnedOff: false,
      developerTermsRequired: false,
      apiTermsVersion: '2026-07-17',
      usageMeteringEnabled: false,
      webhookSecretGraceHours: 24,
      mfaStepUpTtlSeconds: 300,
      sandboxClockControl: false,
      firstPartyOrigins: [],
      smtpUrl: null,
      redisUrl: null,
      databaseUrl: null,
      logLevel: 'info',
      stagingBaseUrl: 'https://sandbox.staging.svc.example',
      jwtSecret: null,
      secretsEncryptionKey: null,
      bodyLimitBytes: 1_048_576,
      shutdownDrainMs: 10_000,
      requestTimeoutMs: 30_000,
      trustedProxies: [],
      rateLimitsEnabled: true,
      sandboxFeedIntervalMs: 1000,
      cryptoTickIntervalMs: 1000,
      sandboxStartingBalanceCents: 1_000_000,
      orderMaxQuantity: 100_000,
      maxOpenOrdersPerKey: 10_000,
      exportMaxRows: 1_000_000,
      maxApiKeysPerUser: 100,
      maxWorldsPerUser: 20,
      worldIdleUnloadSeconds: 300,
      // CONTRACT.md: no auth within 10 s closes the socket; a webhook answer counts within 10 s.
      wsAuthTimeoutMs: 10_000,
      wsHeartbeatMs: 30_000,
      wsMaxSubscriptions: 100,
      wsMaxConnectionsPerIp: 50,
      wsMessageRate: 20,
      wsMessageBurst: 250,
      wsCoalesceMs: 0,
      webhookTimeoutMs: 10_000,
      webhookMaxInFlight: 256,
      webhookRetrySchedule: [0, 30, 120, 600, 3600, 21600],
      webhookAllowPrivateTargets: true,
      sqliteCheckpointIntervalMs: 25,
      rankSampleIntervalMs: 86_400_000,
      rankHistoryDays: 365,
      rfqHouseSpreadCents: 4,
      passwordScryptCost: 32_768,
    });
  });

  it('bounds the index history boundaries kept: a minute for 366 days at most', () => {
    expect(loadConfig({ INDEX_HISTORY_DAYS: '366' }).indexHistoryDays).toBe(366);
    const err = expectRefused({ INDEX_HISTORY_DAYS: '367' }, 'INDEX_HISTORY_DAYS');
    expect(err.message).toContain('must be at most 366 with INDEX_SAMPLE_INTERVAL_MS=60000');
    // A finer interval alone shrinks the default instead of stopping the boot.
    expect(loadConfig({ INDEX_SAMPLE_INTERVAL_MS: '1000' }).indexHistoryDays).toBe(6);
    expect(
      loadConfig({ INDEX_SAMPLE_INTERVAL_MS: '3600000', INDEX_HISTORY_DAYS: '3650' })
        .indexHistoryDays,
    ).toBe(3650);
  });

  it('bounds the rank history boundaries kept: days over the sample interval', () => {
    expect(loadConfig({ RANK_HISTORY_DAYS: '3650' }).rankHistoryDays).toBe(3650);
    expect(
      loadConfig({ RANK_SAMPLE_INTERVAL_MS: '3600000', RANK_HISTORY_DAYS: '152' }).rankHistoryDays,
    ).toBe(152);
    const err = expectRefused(
      { RANK_SAMPLE_INTERVAL_MS: '3600000', RANK_HISTORY_DAYS: '153' },
      'RANK_HISTORY_DAYS',
    );
    expect(err.message).toContain(
      'must be at most 152 with RANK_SAMPLE_INTERVAL_MS=3600000 (at most 3660 boundaries',
    );
    expect(loadConfig({ RANK_SAMPLE_INTERVAL_MS: '3600000' }).rankHistoryDays).toBe(152);
  });

  it('sizes the WebSocket message burst from WS_MAX_SUBSCRIPTIONS unless it is given', () => {
    // Auth, every channel subscribed, and all of them resubscribed (a resync) fit at once.
    expect(loadConfig({ WS_MAX_SUBSCRIPTIONS: '500' }).wsMessageBurst).toBe(1050);
    expect(loadConfig({ WS_MAX_SUBSCRIPTIONS: '500', WS_MESSAGE_BURST: '40' }).wsMessageBurst).toBe(
      40,
    );
    expectRefused({ WS_MESSAGE_BURST: '0' }, 'WS_MESSAGE_BURST');
    // Coalescing may add at most 5 ms of delay to a message (issue 23).
    expect(loadConfig({ WS_COALESCE_MS: '5' }).wsCoalesceMs).toBe(5);
    expectRefused({ WS_COALESCE_MS: '6' }, 'WS_COALESCE_MS');
    expectRefused({ WS_MESSAGE_RATE: 'fast' }, 'WS_MESSAGE_RATE');
  });

  it('treats empty and blank values as unset', () => {
    expect(loadConfig({ PORT: '', HOST: '   ', APP_ENV: '' })).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      appEnv: 'development',
    });
  });

  it('reads every variable it is given', () => {
    const c = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      DATA_DIR: '/var/lib/svc',
      APP_ENV: 'staging',
      DEVELOPER_TERMS_REQUIRED: 'true',
      API_TERMS_VERSION: '2027-01-01',
      DATA_API_USAGE_METERING_ENABLED: 'yes',
      WEBHOOK_SECRET_GRACE_HOURS: '48',
      MFA_STEP_UP_TTL_SECONDS: '60',
      SANDBOX_CLOCK_CONTROL: '1',
      FIRST_PARTY_ORIGINS: 'https://app.example, http://localhost:5173/',
      SMTP_URL: 'smtp://mail.example:2525',
      LOG_LEVEL: 'debug',
      STAGING_BASE_URL: 'https://staging.example',
      JWT_SECRET: 'x'.repeat(32),
      SECRETS_ENCRYPTION_KEY: 'ab'.repeat(32),
      BODY_LIMIT_BYTES: '2048',
    });
    expect(c).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      dataDir: '/var/lib/svc',
      appEnv: 'staging',
      developerTermsRequired: true,
      apiTermsVersion: '2027-01-01',
      usageMeteringEnabled: true,
      webhookSecretGraceHours: 48,
      mfaStepUpTtlSeconds: 60,
      sandboxClockControl: true,
      firstPartyOrigins: ['https://app.example', 'http://localhost:5173'],
      smtpUrl: 'smtp://mail.example:2525',
      logLevel: 'debug',
      stagingBaseUrl: 'https://staging.example',
      jwtSecret: 'x'.repeat(32),
      secretsEncryptionKey: 'ab'.repeat(32),
      bodyLimitBytes: 2048,
    });
  });

  describe('the developer sandbox flag', () => {
    it('is on by default for development and staging, off for production', () => {
      expect(loadConfig({ APP_ENV: 'development' }).sandboxEnabled).toBe(true);
      expect(loadConfig({ APP_ENV: 'staging' }).sandboxEnabled).toBe(true);
      expect(loadConfig({ APP_ENV: 'production' }).sandboxEnabled).toBe(false);
    });

    it('follows DEVELOPER_SANDBOX_ENABLED when given', () => {
      expect(
        loadConfig({ APP_ENV: 'staging', DEVELOPER_SANDBOX_ENABLED: 'false' }).sandboxEnabled,
      ).toBe(false);
      expect(
        loadConfig({ APP_ENV: 'production', DEVELOPER_SANDBOX_ENABLED: 'true' }).sandboxEnabled,
      ).toBe(true);
    });

    it('SANDBOX_PINNED_OFF pins it off whatever else says', () => {
      for (const env of [
        { APP_ENV: 'staging', SANDBOX_PINNED_OFF: 'true' },
        { APP_ENV: 'staging', SANDBOX_PINNED_OFF: 'true', DEVELOPER_SANDBOX_ENABLED: 'true' },
        { APP_ENV: 'development', SANDBOX_PINNED_OFF: 'on' },
      ]) {
        const c = loadConfig(env);
        expect(c.sandboxEnabled).toBe(false);
        expect(c.sandboxPinnedOff).toBe(true);
      }
    });
  });

  describe('WEBHOOK_SECRET_GRACE_HOURS', () => {
    it('defaults to 24 and is capped at 72', () => {
      expect(loadConfig({}).webhookSecretGraceHours).toBe(24);
      expect(loadConfig({ WEBHOOK_SECRET_GRACE_HOURS: '72' }).webhookSecretGraceHours).toBe(72);
      expect(loadConfig({ WEBHOOK_SECRET_GRACE_HOURS: '73' }).webhookSecretGraceHours).toBe(72);
      expect(loadConfig({ WEBHOOK_SECRET_GRACE_HOURS: '1000' }).webhookSecretGraceHours).toBe(72);
      expect(loadConfig({ WEBHOOK_SECRET_GRACE_HOURS: '0' }).webhookSecretGraceHours).toBe(0);
    });

    it('refuses a value that is not a non-negative integer', () => {
      expectRefused({ WEBHOOK_SECRET_GRACE_HOURS: '-1' }, 'WEBHOOK_SECRET_GRACE_HOURS');
      expectRefused({ WEBHOOK_SECRET_GRACE_HOURS: '1.5' }, 'WEBHOOK_SECRET_GRACE_HOURS');
      expectRefused({ WEBHOOK_SECRET_GRACE_HOURS: 'day' }, 'WEBHOOK_SECRET_GRACE_HOURS');
    });

    it('accepts 0..100000, lowering 73..100000 to 72, as the README and the message say', () => {
      expect(loadConfig({ WEBHOOK_SECRET_GRACE_HOURS: '100000' }).webhookSecretGraceHours).toBe(72);
      for (const v of ['100001', '-1']) {
        const err = expectRefused({ WEBHOOK_SECRET_GRACE_HOURS: v }, 'WEBHOOK_SECRET_GRACE_HOURS');
        expect(err.message).toContain('between 0 and 100000');
        expect(err.message).toContain('values above 72 are lowered to 72');
      }
      const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
      const row = readme.split('\n').find((l) => l.startsWith('| `WEBHOOK_SECRET_GRACE_HOURS`'));
      expect(row).toContain('0..100000 accepted');
      expect(row).toContain('above 72 (73..100000) are lowered to 72');
    });
  });

  it('accepts the usual spellings of booleans, case-insensitively', () => {
    for (const t of ['true', 'TRUE', '1', 'yes', 'on']) {
      expect(loadConfig({ DEVELOPER_TERMS_REQUIRED: t }).developerTermsRequired).toBe(true);
    }
    for (const f of ['false', 'False', '0', 'no', 'off']) {
      expect(loadConfig({ DEVELOPER_TERMS_REQUIRED: f }).developerTermsRequired).toBe(false);
    }
  });

  it('names the accepted spellings when a boolean is refused', () => {
    const err = expectRefused({ RATE_LIMITS_ENABLED: 'nah' }, 'RATE_LIMITS_ENABLED');
    expect(err.message).toBe(
      'Invalid configuration: RATE_LIMITS_ENABLED must be true/false, 1/0, yes/no or on/off (any letter case), got "nah"',
    );
  });

  describe('ADMIN_EMAILS', () => {
    it('is a list of email addresses, lower-cased as accounts store them', () => {
      expect(loadConfig({}).adminEmails).toEqual([]);
      expect(loadConfig({ ADMIN_EMAILS: ' Ops@Corp.test ,, lead@corp.test' }).adminEmails).toEqual([
        'ops@corp.test',
        'lead@corp.test',
      ]);
    });

    it.each(['ops', 'ops@', '@corp.test', 'a b@corp.test', 'ops@corp'])(
      'refuses %j, naming the entry',
      (entry) => {
        const err = expectRefused({ ADMIN_EMAILS: `ok@corp.test, ${entry}` }, 'ADMIN_EMAILS');
        expect(err.message).toContain(`"${entry}"`);
      },
    );
  });

  describe('CREATOR_EMAILS', () => {
    it('is a list of email addresses, lower-cased, refusing a malformed entry by name', () => {
      expect(loadConfig({}).creatorEmails).toEqual([]);
      expect(loadConfig({ CREATOR_EMAILS: ' Maker@Corp.test ' }).creatorEmails).toEqual([
        'maker@corp.test',
      ]);
      const err = expectRefused({ CREATOR_EMAILS: 'ok@corp.test, maker@' }, 'CREATOR_EMAILS');
      expect(err.message).toContain('"maker@"');
    });
  });

  describe('TRUSTED_PROXIES', () => {
    it('accepts IP addresses and CIDR ranges of either family', () => {
      const list = '10.0.0.1, 10.0.0.0/8, 128.0.0.0/1, 192.168.1.0/32, ::1, fd00::/8, ::1/128';
      expect(loadConfig({ TRUSTED_PROXIES: list }).trustedProxies).toEqual(list.split(', '));
    });

    it.each([
      '10.0.0.0/33',
      '0.0.0.0/0',
      '::/0',
      '999.1.1.1',
      ':::',
      '::1/129',
      '10.0.0.0/',
      '1.2.3',
      '01.2.3.4',
      '10.0.0.1/08',
      'fe80::1%eth0',
      'loopback',
    ])('refuses %j, naming the entry', (entry) => {
      const err = expectRefused({ TRUSTED_PROXIES: `10.0.0.1, ${entry}` }, 'TRUSTED_PROXIES');
      expect(err.message).toContain(`"${entry}"`);
    });
  });

  describe('HOST', () => {
    it('accepts IP literals and host names without resolving them', () => {
      for (const host of ['0.0.0.0', '::', '::1', 'localhost', 'api-1.internal', '3com.example']) {
        expect(loadConfig({ HOST: host }).host).toBe(host);
      }
    });

    it.each(['256.1.1.1', '1.2.3', '10.1', '999', 'not..a..host', 'under_score.example'])(
      'refuses %j',
      (host) => {
        const err = expectRefused({ HOST: host }, 'HOST');
        expect(err.message).toContain(`"${host}"`);
      },
    );
  });

  describe('FIRST_PARTY_ORIGINS', () => {
    it('keeps each origin as a browser sends it: lower-case, without the default port', () => {
      expect(
        loadConfig({
          FIRST_PARTY_ORIGINS:
            'https://app.example:443, https://App.Example, HTTP://LOCALHOST:80/, http://localhost:5173, https://app.example:8443',
        }).firstPartyOrigins,
      ).toEqual([
        'https://app.example',
        'https://app.example',
        'http://localhost',
        'http://localhost:5173',
        'https://app.example:8443',
      ]);
    });

    it.each([
      'https://app.example/path',
      'https://app.example//',
      'https://app.example?',
      'https://app.example?x=1',
      'https://app.example#top',
      'https://user@app.example',
      'https://user:pw@app.example',
      'https://*.example',
      '*',
      'null',
      'app.example',
      'ftp//broken',
    ])('refuses %j, naming it', (origin) => {
      const err = expectRefused({ FIRST_PARTY_ORIGINS: origin }, 'FIRST_PARTY_ORIGINS');
      expect(err.message).toContain(`"${origin}"`);
    });
  });

  describe('REDIS_URL', () => {
    it.each(['redis://127.0.0.1:6379', 'rediss://user:pw@cache.example:6380/2', 'redis://h'])(
      'accepts %j',
      (url) => {
        expect(loadConfig({ REDIS_URL: url }).redisUrl).toBe(url);
      },
    );

    it.each([
      'http://127.0.0.1:6379',
      'redis://',
      '127.0.0.1:6379',
      'redis://user:secret-pw@host:6379/db',
      'redis://:secret-pw@host/123',
    ])('refuses %j without echoing it (it may hold a password)', (url) => {
      const err = expectRefused({ REDIS_URL: url }, 'REDIS_URL');
      expect(err.message).not.toContain('secret-pw');
    });
  });

  describe('REDIS_KEY_PREFIX', () => {
    it('takes the prefix given', () => {
      expect(loadConfig({ REDIS_KEY_PREFIX: 'exchange-staging:' }).redisKeyPrefix).toBe(
        'exchange-staging:',
      );
    });

    it.each(['has space', 'x'.repeat(65), 'caf\u00e9:'])('refuses %j', (prefix) => {
      expectRefused({ REDIS_KEY_PREFIX: prefix }, 'REDIS_KEY_PREFIX');
    });

    it('defaults to one prefix per database: instances of one deployment share it', () => {
      const a = loadConfig({ DATABASE_URL: 'postgres://svc:one@db.example:5432/exchange' });
      const b = loadConfig({ DATABASE_URL: 'postgres://other:two@db.example/exchange' });
      expect(a.redisKeyPrefix).toMatch(/^svc:[0-9a-f]{12}:$/);
      // The credentials are not part of it: a rotated password keeps the keys.
      expect(b.redisKeyPrefix).toBe(a.redisKeyPrefix);
    });

    it('defaults to different prefixes for different databases or data directories', () => {
      const prefixes = [
        loadConfig({ DATABASE_URL: 'postgres://svc@db.example:5432/exchange' }),
        loadConfig({ DATABASE_URL: 'postgres://svc@db.example:5432/exchange2' }),
        loadConfig({ DATABASE_URL: 'postgres://svc@db2.example:5432/exchange' }),
        loadConfig({ DATA_DIR: '/srv/a' }),
        loadConfig({ DATA_DIR: '/srv/b' }),
      ].map((c) => c.redisKeyPrefix);
      expect(new Set(prefixes).size).toBe(prefixes.length);
    });
  });

  describe('DATABASE_URL', () => {
    it.each([
      'postgres://svc@127.0.0.1:5432/exchange',
      'postgresql://user:pw@db.example/exchange?sslmode=require',
      'postgres://h/db',
    ])('accepts %j', (url) => {
      expect(loadConfig({ DATABASE_URL: url }).databaseUrl).toBe(url);
    });

    it.each([
      'mysql://user:secret-pw@host/db',
      'postgres://',
      '127.0.0.1:5432/db',
      'postgres://user:secret-pw@host:5432',
      'postgres://user:secret-pw@host:5432/',
      'postgres://user:secret-pw@host/a/b',
    ])('refuses %j without echoing it (it may hold a password)', (url) => {
      const err = expectRefused({ DATABASE_URL: url }, 'DATABASE_URL');
      expect(err.message).not.toContain('secret-pw');
    });
  });

  describe('SMTP_URL', () => {
    it('accepts a URL naming the mail server, credentials included', () => {
      const url = 'smtps://user:pw@mail.example:465';
      expect(loadConfig({ SMTP_URL: url }).smtpUrl).toBe(url);
    });

    it.each(['smtp://', 'smtps://', 'smtp:///path', 'smtp://user:secret-pw@', 'smtp://:25'])(
      'refuses %j without echoing it (it may hold a password)',
      (url) => {
        const err = expectRefused({ SMTP_URL: url }, 'SMTP_URL');
        expect(err.message).not.toContain('secret-pw');
      },
    );
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '-1'],
    ['PORT', '65536'],
    ['PORT', '80.5'],
    ['APP_ENV', 'prod'],
    ['APP_ENV', 'Production'],
    ['DEVELOPER_SANDBOX_ENABLED', 'maybe'],
    ['SANDBOX_PINNED_OFF', '2'],
    ['DEVELOPER_TERMS_REQUIRED', 'yesplease'],
    ['DATA_API_USAGE_METERING_ENABLED', 'enabled'],
    ['API_TERMS_VERSION', 'v2'],
    ['API_TERMS_VERSION', '17/07/2026'],
    ['API_TERMS_VERSION', '2026-13-45'],
    ['API_TERMS_VERSION', '2026-02-30'],
    ['REQUEST_TIMEOUT_MS', '999'],
    ['REQUEST_TIMEOUT_MS', 'soon'],
    ['MFA_STEP_UP_TTL_SECONDS', '0'],
    ['MFA_STEP_UP_TTL_SECONDS', '86401'],
    ['MFA_STEP_UP_TTL_SECONDS', 'five minutes'],
    ['SANDBOX_CLOCK_CONTROL', 'sure'],
    ['FIRST_PARTY_ORIGINS', 'not a url'],
    ['FIRST_PARTY_ORIGINS', 'https://app.example/path'],
    ['FIRST_PARTY_ORIGINS', 'https://ok.example,ftp//broken'],
    ['SMTP_URL', 'http://mail.example'],
    ['LOG_LEVEL', 'verbose'],
    ['JWT_SECRET', 'too-short'],
    ['SECRETS_ENCRYPTION_KEY', 'abcd'],
    ['SECRETS_ENCRYPTION_KEY', 'zz'.repeat(32)],
    ['BODY_LIMIT_BYTES', '10'],
    ['BODY_LIMIT_BYTES', String(17 * 1_048_576)],
    ['STAGING_BASE_URL', 'staging.example'],
    ['STAGING_BASE_URL', 'ftp://staging.example'],
    ['STAGING_BASE_URL', 'https://staging.example/?x=1'],
    ['TRUSTED_PROXIES', 'proxy.example'],
    ['WEBHOOK_RETRY_SCHEDULE', '0,1,x'],
    ['WEBHOOK_RETRY_SCHEDULE', '-1'],
    ['RATE_LIMITS_ENABLED', 'nah'],
    ['SANDBOX_FEED_INTERVAL_MS', '-5'],
    ['RFQ_HOUSE_SPREAD_CENTS', '0'],
    ['RFQ_HOUSE_SPREAD_CENTS', '49'],
    ['CRYPTO_TICK_INTERVAL_MS', '-1'],
    ['CRYPTO_TICK_INTERVAL_MS', '3600001'],
    ['CRYPTO_TICK_INTERVAL_MS', '1s'],
    ['ORDER_MAX_QUANTITY', '0'],
    ['WS_AUTH_TIMEOUT_MS', '10'],
    ['INDEX_SAMPLE_INTERVAL_MS', '999'],
    ['INDEX_SAMPLE_INTERVAL_MS', '1m'],
    ['INDEX_HISTORY_DAYS', '0'],
    ['RANK_SAMPLE_INTERVAL_MS', '60000'],
    ['RANK_SAMPLE_INTERVAL_MS', '2592000001'],
    ['RANK_SAMPLE_INTERVAL_MS', '1d'],
    ['RANK_HISTORY_DAYS', '0'],
    ['RANK_HISTORY_DAYS', '3651'],
  ])('refuses %s=%j with a ConfigError naming the variable', (variable, value) => {
    const err = expectRefused({ [variable]: value }, variable);
    expect(err.message).toMatch(/^Invalid configuration: /);
  });

  it('refuses the sandbox clock control on production', () => {
    expectRefused(
      { APP_ENV: 'production', SANDBOX_CLOCK_CONTROL: 'true' },
      'SANDBOX_CLOCK_CONTROL',
    );
    expect(
      loadConfig({ APP_ENV: 'staging', SANDBOX_CLOCK_CONTROL: 'true' }).sandboxClockControl,
    ).toBe(true);
  });

  it('the README documents every variable the service reads', () => {
    const source = readFileSync(new URL('./app-config.ts', import.meta.url), 'utf8');
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    // Every `helper(env, 'NAME', ...)` call, also when Prettier has spread it over several lines.
    const variables = [...source.matchAll(/\(\s*env,\s*'([A-Z][A-Z0-9_]*)'/g)].map((m) => m[1]);
    expect(variables.length).toBeGreaterThanOrEqual(19);
    const rows = readme.split('\n').filter((l) => l.startsWith('| `'));
    for (const v of new Set(variables)) {
      expect([v, rows.some((r) => r.startsWith(`| \`${v}\``))]).toEqual([v, true]);
    }
  });
});
