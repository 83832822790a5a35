import { isIP } from 'node:net';
import proxyaddr from '@fastify/proxy-addr';
import { REDIS_KEY_PREFIX_PATTERN, defaultRedisKeyPrefix } from './redis-key-prefix.js';
/**
 * The service configuration: every variable the service reads, parsed and validated once at boot.
 * Nothing else in the code reads `process.env`; a bad value stops the boot with a message that
 * names the variable.
 */
export type AppEnv = 'development' | 'staging' | 'production';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface AppConfig {
  port: number;
  host: string;
  dataDir: string;
  appEnv: AppEnv;
  /** Resolved value: APP_ENV default, DEVELOPER_SANDBOX_ENABLED and SANDBOX_PINNED_OFF applied. */
  sandboxEnabled: boolean;
  sandboxPinnedOff: boolean;
  developerTermsRequired: boolean;
  apiTermsVersion: string;
  usageMeteringEnabled: boolean;
  webhookSecretGraceHours: number;
  mfaStepUpTtlSeconds: number;
  sandboxClockControl: boolean;
  firstPartyOrigins: string[];
  /** Verified accounts with these emails (lower-cased) hold the admin role (ADMIN_EMAILS). */
  adminEmails: string[];
  /** Verified accounts with these emails hold the CREATOR role (live markets; CREATOR_EMAILS). */
  creatorEmails: string[];
  smtpUrl: string | null;
  /** Shared state (limit windows, the signature replay cache) in Redis; null: in-process. */
  redisUrl: string | null;
  /**
   * Starts every Redis key and channel of this deployment (REDIS_KEY_PREFIX; default derived from
   * the database, see redis-key-prefix.ts), so deployments sharing one Redis never collide.
   */
  redisKeyPrefix: string;
  /**
   * The three databases on PostgreSQL (schemas platform, live, paper of this database, and one
   * schema per ephemeral world); null: SQLite files in DATA_DIR.
   */
  databaseUrl: string | null;
  logLevel: LogLevel;
  /** Base URL of the staging deployment; the only server listed in the OpenAPI document. */
  stagingBaseUrl: string;
  /** Optional secrets given by the operator; generated into DATA_DIR when absent. */
  jwtSecret: string | null;
  secretsEncryptionKey: string | null;
  /** Largest request body accepted, in bytes. */
  bodyLimitBytes: number;
  /** Graceful shutdown: connections still open this long after SIGTERM are closed (ms). */
  shutdownDrainMs: number;
  /** A request (headers and body) not fully received in this long is answered 408 (ms). */
  requestTimeoutMs: number;
  /** Proxies whose X-Forwarded-For is honoured (IPs or CIDRs); empty: the socket address. */
  trustedProxies: string[];
  /** Rate limits and quotas on (default). Off only for benchmarks; refused on production. */
  rateLimitsEnabled: boolean;
  /** Paper price feed: PRNG seed and tick interval (0 stops the automatic ticks). */
  sandboxFeedSeed: number;
  sandboxFeedIntervalMs: number;
  /** Crypto reference walks (both worlds): one step per multiple of this on the service clock; 0 stops them. */
  cryptoTickIntervalMs: number;
  /** Balance a paper account starts with and returns to on reset, in cents. */
  sandboxStartingBalanceCents: number;
  /** Resource caps, each answered with its own error code. */
  orderMaxQuantity: number;
  maxOpenOrdersPerKey: number;
  exportMaxRows: number;
  /** Historical exports: rows a job's worker thread reads and writes per batch, and how often the expiry sweep runs (wall ms). */
  exportBatchRows: number;
  exportSweepMs: number;
  /** Active (unrevoked, unexpired) API keys one user may hold. */
  maxApiKeysPerUser: number;
  /**
   * Ephemeral worlds: live worlds per user, seconds untouched before a loaded world is unloaded
   * from memory (it loads again on its next request), and how often the expiry and idle sweep
   * runs (wall ms).
   */
  maxWorldsPerUser: number;
  worldIdleUnloadSeconds: number;
  worldSweepMs: number;
  /** Realtime: auth deadline, heartbeat, per-connection send buffer and subscription cap, per-IP connections. */
  wsAuthTimeoutMs: number;
  wsHeartbeatMs: number;
  wsMaxBufferedBytes: number;
  wsMaxSubscriptions: number;
  wsMaxConnectionsPerIp: number;
  wsMessageRate: number;
  wsMessageBurst: number;
  /**
   * Per-connection coalescing of engine-event messages: at most one socket write per connection
   * per this many wall ms (0: a write per fan-out batch). It bounds the delay it adds (<= 5 ms).
   */
  wsCoalesceMs: number;
  /** Webhooks: delays in seconds before each attempt (its length is the attempt count). */
  webhookRetrySchedule: number[];
  webhookTimeoutMs: number;
  /** Webhook attempts in flight at once, over all endpoints (each endpoint may still start one). */
  webhookMaxInFlight: number;
  /** Loopback/private/link-local targets allowed (default: not on production). */
  webhookAllowPrivateTargets: boolean;
  /** How often the delivery worker looks for due deliveries, in real milliseconds. */
  webhookPollMs: number;
  /**
   * How often a worker thread checkpoints the SQLite write-ahead logs, in real milliseconds;
   * 0 leaves it to SQLite inside commits (see database/wal-checkpointer.ts).
   */
  sqliteCheckpointIntervalMs: number;
  /** Indices: a history point every multiple of this on the service clock (ms). */
  indexSampleIntervalMs: number;
  /** Indices: history points older than this many days are deleted when sampling. */
  indexHistoryDays: number;
  /**
   * Rank history: a point per participant at every multiple of this on the service clock
   * (default a day: 00:00 UTC), kept for RANK_HISTORY_DAYS days.
   */
  rankSampleIntervalMs: number;
  rankHistoryDays: number;
  /** Paper house RFQ responder: its quotes sit this many cents either side of the reference. */
  rfqHouseSpreadCents: number;
  /**
   * scrypt cost N of new password hashes (a power of two; PASSWORD_SCRYPT_COST). A stored hash
   * keeps the N it was made with, so changing this never locks anyone out.
   */
  passwordScryptCost: number;
}

/** Most index-history boundaries kept (INDEX_HISTORY_DAYS over INDEX_SAMPLE_INTERVAL_MS). */
export const MAX_INDEX_BOUNDARIES = 527_040;

/** The production scrypt cost N: ~32 MiB and tens of milliseconds per hash (OWASP's guidance). */
export const DEFAULT_PASSWORD_SCRYPT_COST = 32_768;

/** Most rank-history boundaries kept (RANK_HISTORY_DAYS over RANK_SAMPLE_INTERVAL_MS). */
export const MAX_RANK_BOUNDARIES = 3660;

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`Invalid configuration: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function present(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

function str(env: Env, name: string, fallback: string): string {
  return present(env, name) ?? fallback;
}

/**
 * An IP address or an RFC 1123 host name (labels of 1..63 letters, digits and inner hyphens). A
 * name whose last label is all digits (256.1.1.1, 10.1) is neither: no top-level domain is
 * numeric (RFC 3696), and the resolver would read it as a malformed IPv4 address. Names are not
 * resolved here: a name that does not resolve stops the boot when the service starts listening.
 */
function hostName(env: Env, name: string, fallback: string): string {
  const v = present(env, name);
  if (v === undefined) return fallback;
  const label = '[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?';
  if (isIP(v) !== 0) return v;
  if (v.length <= 253 && new RegExp(`^${label}(\\.${label})*$`).test(v) && !/(^|\.)\d+$/.test(v))
    return v;
  throw new ConfigError(name, `must be an IP address or a host name, got "${v}"`);
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const v = present(env, name);
  if (v === undefined) return fallback;
  const lower = v.toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(lower)) return true;
  if (['false', '0', 'no', 'off'].includes(lower)) return false;
  throw new ConfigError(
    name,
    `must be true/false, 1/0, yes/no or on/off (any letter case), got "${v}"`,
  );
}

/** An integer in min..max; `note` is added to the range in the message (e.g. what is capped). */
function int(
  env: Env,
  name: string,
  fallback: number,
  min: number,
  max: number,
  note = '',
): number {
  const v = present(env, name);
  if (v === undefined) return fallback;
  if (!/^-?\d+$/.test(v)) throw new ConfigError(name, `must be an integer, got "${v}"`);
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new ConfigError(name, `must be between ${min} and ${max}${note}, got ${v}`);
  }
  return n;
}

function oneOf<T extends string>(env: Env, name: string, fallback: T, allowed: readonly T[]): T {
  const v = present(env, name);
  if (v === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(v)) {
    throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${v}"`);
  }
  return v as T;
}

/**
 * A comma-separated list (blanks and empty entries dropped), each entry read by `entry`, which
 * throws a ConfigError naming the variable for a bad one. Unset: an empty list.
 */
function list(env: Env, name: string, entry: (s: string) => string): string[] {
  const v = present(env, name);
  if (v === undefined) return [];
  return v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map(entry);
}

function origins(env: Env, name: string): string[] {
  return list(env, name, (s) => {
    let url: URL;
    try {
      url = new URL(s);
    } catch {
      throw new ConfigError(name, `holds "${s}", which is not an origin like https://app.example`);
    }
    // scheme://host[:port] and at most a trailing slash: no path, query, fragment,
    // credentials or wildcard. The URL parser then gives the origin as a browser sends it
    // (scheme and host lower-cased, a default port such as :443 for https dropped).
    if (!/^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?#@*\\\s]+\/?$/.test(s) || url.origin === 'null') {
      throw new ConfigError(
        name,
        `holds "${s}", which is not a bare origin (scheme://host[:port])`,
      );
    }
    return url.origin;
  });
}

/** Comma-separated email addresses, lower-cased as accounts store them. */
function emails(env: Env, name: string): string[] {
  return list(env, name, (s) => {
    if (!/^[^\s@,]+@[^\s@,]+\.[^\s@,]+$/.test(s)) {
      throw new ConfigError(name, `holds "${s}", which is not an email address`);
    }
    return s.toLowerCase();
  });
}

function baseUrl(env: Env, name: string, fallback: string): string {
  const v = str(env, name, fallback);
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    throw new ConfigError(name, `must be an absolute http(s) URL, got "${v}"`);
  }
  if (
    (url.protocol !== 'https:' && url.protocol !== 'http:') ||
    url.search !== '' ||
    url.hash !== ''
  ) {
    throw new ConfigError(
      name,
      `must be an http(s) base URL without query or fragment, got "${v}"`,
    );
  }
  return v.replace(/\/+$/, '');
}

function schedule(env: Env, name: string, fallback: number[]): number[] {
  const v = present(env, name);
  if (v === undefined) return fallback;
  const parts = v.split(',').map((s) => s.trim());
  if (parts.length === 0 || parts.length > 20 || parts.some((p) => !/^\d{1,6}$/.test(p))) {
    throw new ConfigError(
      name,
      `must be 1 to 20 comma-separated whole seconds, e.g. 0,30,120; got "${v}"`,
    );
  }
  return parts.map(Number);
}

function proxies(env: Env, name: string): string[] {
  return list(env, name, (s) => {
    if (!isProxyEntry(s)) {
      throw new ConfigError(
        name,
        `holds "${s}", which is not an IP address or CIDR range (e.g. 10.0.0.1, 10.0.0.0/8, ::1, fd00::/8)`,
      );
    }
    return s;
  });
}

/**
 * An IP address, or one with a prefix length its family allows (/1../32 for IPv4, /1../128 for
 * IPv6; proxy-addr refuses /0), that proxy-addr (what Fastify and the realtime hub compile the
 * list with) also accepts.
 */
function isProxyEntry(s: string): boolean {
  const m = /^([0-9a-fA-F:.]+)(?:\/([1-9]\d{0,2}))?$/.exec(s);
  if (m === null) return false;
  const family = isIP(m[1]);
  if (family === 0) return false;
  if (m[2] !== undefined && Number(m[2]) > (family === 4 ? 32 : 128)) return false;
  try {
    proxyaddr.compile([s]);
    return true;
  } catch {
    return false;
  }
}

const LOG_LEVELS: readonly LogLevel[] = [
  'fatal',
  'error',
  'warn',
  'info',
  'debug',
  'trace',
  'silent',
];

/**
 * Days of a sampled history to keep (1..3650): at most `maxBoundaries` multiples of `intervalMs`.
 * Unset, `preferred` days, or fewer when the interval is fine enough to pass the bound.
 */
function historyDays(
  env: Env,
  name: string,
  preferred: number,
  intervalMs: number,
  maxBoundaries: number,
  intervalName: string,
): number {
  const most = Math.floor((maxBoundaries * intervalMs) / 86_400_000);
  const days = int(env, name, Math.max(1, Math.min(preferred, most)), 1, 3_650);
  if (days > most) {
    throw new ConfigError(
      name,
      `must be at most ${most} with ${intervalName}=${intervalMs} (at most ${maxBoundaries} boundaries are kept): keep fewer days or sample less often`,
    );
  }
  return days;
}

/** Parses and validates the environment. Throws {@link ConfigError} naming the first bad variable. */
export function loadConfig(env: Env): AppConfig {
  const appEnv = oneOf<AppEnv>(env, 'APP_ENV', 'development', [
    'development',
    'staging',
    'production',
  ]);
  const sandboxPinnedOff = bool(env, 'SANDBOX_PINNED_OFF', false);
  const sandboxDefault = appEnv !== 'production';
  const sandboxFlag = bool(env, 'DEVELOPER_SANDBOX_ENABLED', sandboxDefault);
  // SPEC: default 24 hours, capped at 72: a larger value is lowered to the cap, not refused.
  // Accepted: 0..100000 (README); 73..100000 is lowered to 72.
  const grace = Math.min(
    int(env, 'WEBHOOK_SECRET_GRACE_HOURS', 24, 0, 100_000, ' (values above 72 are lowered to 72)'),
    72,
  );
  const sandboxClockControl = bool(env, 'SANDBOX_CLOCK_CONTROL', false);
  if (sandboxClockControl && appEnv === 'production') {
    throw new ConfigError('SANDBOX_CLOCK_CONTROL', 'must not be true when APP_ENV is production');
  }
  const apiTermsVersion = str(env, 'API_TERMS_VERSION', '2026-07-17');
  if (!isCalendarDate(apiTermsVersion)) {
    throw new ConfigError(
      'API_TERMS_VERSION',
      `must be a date like 2026-07-17, got "${apiTermsVersion}"`,
    );
  }
  const smtpUrl = present(env, 'SMTP_URL') ?? null;
  if (smtpUrl !== null) smtpUrlChecked(smtpUrl);
  const redisUrl = present(env, 'REDIS_URL') ?? null;
  if (redisUrl !== null) redisUrlChecked(redisUrl);
  const databaseUrl = present(env, 'DATABASE_URL') ?? null;
  if (databaseUrl !== null) databaseUrlChecked(databaseUrl);
  const dataDir = str(env, 'DATA_DIR', './data');
  const redisKeyPrefix =
    present(env, 'REDIS_KEY_PREFIX') ?? defaultRedisKeyPrefix(databaseUrl, dataDir);
  if (!REDIS_KEY_PREFIX_PATTERN.test(redisKeyPrefix)) {
    throw new ConfigError(
      'REDIS_KEY_PREFIX',
      'must be 1 to 64 printable ASCII characters without spaces, like "exchange-staging:"',
    );
  }
  const jwtSecret = present(env, 'JWT_SECRET') ?? null;
  if (jwtSecret !== null && jwtSecret.length < 32) {
    throw new ConfigError('JWT_SECRET', 'must be at least 32 characters');
  }
  const encKey = present(env, 'SECRETS_ENCRYPTION_KEY') ?? null;
  if (encKey !== null && !/^[0-9a-fA-F]{64}$/.test(encKey)) {
    throw new ConfigError('SECRETS_ENCRYPTION_KEY', 'must be 64 hex characters (32 bytes)');
  }
  // Each boundary kept is a few rows (an index) or a row per participant (rank): the boundaries
  // kept are bounded, and the default number of days shrinks to fit a finer interval.
  const indexSampleIntervalMs = int(env, 'INDEX_SAMPLE_INTERVAL_MS', 60_000, 1_000, 86_400_000);
  const indexHistoryDays = historyDays(
    env,
    'INDEX_HISTORY_DAYS',
    30,
    indexSampleIntervalMs,
    MAX_INDEX_BOUNDARIES,
    'INDEX_SAMPLE_INTERVAL_MS',
  );
  const rankSampleIntervalMs = int(
    env,
    'RANK_SAMPLE_INTERVAL_MS',
    86_400_000,
    3_600_000,
    2_592_000_000,
  );
  const rankHistoryDays = historyDays(
    env,
    'RANK_HISTORY_DAYS',
    365,
    rankSampleIntervalMs,
    MAX_RANK_BOUNDARIES,
    'RANK_SAMPLE_INTERVAL_MS',
  );
  const wsMaxSubscriptions = int(env, 'WS_MAX_SUBSCRIPTIONS', 100, 1, 10_000);
  const rateLimitsEnabled = bool(env, 'RATE_LIMITS_ENABLED', true);
  if (!rateLimitsEnabled && appEnv === 'production') {
    throw new ConfigError('RATE_LIMITS_ENABLED', 'must not be false when APP_ENV is production');
  }
  const passwordScryptCost = scryptCost(env, appEnv);
  return {
    port: int(env, 'PORT', 3000, 0, 65535),
    host: hostName(env, 'HOST', '127.0.0.1'),
    dataDir,
    appEnv,
    sandboxPinnedOff,
    sandboxEnabled: sandboxFlag && !sandboxPinnedOff,
    developerTermsRequired: bool(env, 'DEVELOPER_TERMS_REQUIRED', false),
    apiTermsVersion,
    usageMeteringEnabled: bool(env, 'DATA_API_USAGE_METERING_ENABLED', false),
    webhookSecretGraceHours: grace,
    mfaStepUpTtlSeconds: int(env, 'MFA_STEP_UP_TTL_SECONDS', 300, 1, 86400),
    sandboxClockControl,
    firstPartyOrigins: origins(env, 'FIRST_PARTY_ORIGINS'),
    adminEmails: emails(env, 'ADMIN_EMAILS'),
    creatorEmails: emails(env, 'CREATOR_EMAILS'),
    smtpUrl,
    redisUrl,
    redisKeyPrefix,
    databaseUrl,
    logLevel: oneOf<LogLevel>(env, 'LOG_LEVEL', 'info', LOG_LEVELS),
    stagingBaseUrl: baseUrl(env, 'STAGING_BASE_URL', 'https://sandbox.staging.svc.example'),
    jwtSecret,
    secretsEncryptionKey: encKey,
    bodyLimitBytes: int(env, 'BODY_LIMIT_BYTES', 1_048_576, 1024, 16 * 1_048_576),
    shutdownDrainMs: int(env, 'SHUTDOWN_DRAIN_MS', 10_000, 100, 600_000),
    requestTimeoutMs: int(env, 'REQUEST_TIMEOUT_MS', 30_000, 1_000, 600_000),
    trustedProxies: proxies(env, 'TRUSTED_PROXIES'),
    rateLimitsEnabled,
    sandboxFeedSeed: int(env, 'SANDBOX_FEED_SEED', 20260508, -2147483648, 2147483647),
    sandboxFeedIntervalMs: int(env, 'SANDBOX_FEED_INTERVAL_MS', 1000, 0, 3_600_000),
    cryptoTickIntervalMs: int(env, 'CRYPTO_TICK_INTERVAL_MS', 1000, 0, 3_600_000),
    sandboxStartingBalanceCents: int(
      env,
      'SANDBOX_STARTING_BALANCE_CENTS',
      1_000_000,
      0,
      1_000_000_000_000,
    ),
    orderMaxQuantity: int(env, 'ORDER_MAX_QUANTITY', 100_000, 1, 1_000_000_000),
    maxOpenOrdersPerKey: int(env, 'MAX_OPEN_ORDERS_PER_KEY', 10_000, 1, 1_000_000),
    maxApiKeysPerUser: int(env, 'MAX_API_KEYS_PER_USER', 100, 1, 10_000),
    maxWorldsPerUser: int(env, 'MAX_WORLDS_PER_USER', 20, 1, 1_000),
    worldIdleUnloadSeconds: int(env, 'WORLD_IDLE_UNLOAD_SECONDS', 300, 1, 86_400),
    worldSweepMs: int(env, 'WORLD_SWEEP_MS', 1_000, 10, 600_000),
    exportMaxRows: int(env, 'EXPORT_MAX_ROWS', 1_000_000, 1, 100_000_000),
    exportBatchRows: int(env, 'EXPORT_BATCH_ROWS', 500, 1, 100_000),
    exportSweepMs: int(env, 'EXPORT_SWEEP_MS', 60_000, 10, 3_600_000),
    wsAuthTimeoutMs: int(env, 'WS_AUTH_TIMEOUT_MS', 10_000, 100, 600_000),
    wsHeartbeatMs: int(env, 'WS_HEARTBEAT_MS', 30_000, 100, 600_000),
    wsMaxBufferedBytes: int(env, 'WS_MAX_BUFFERED_BYTES', 4 * 1_048_576, 1024, 1_073_741_824),
    wsMaxSubscriptions,
    wsMaxConnectionsPerIp: int(env, 'WS_MAX_CONNECTIONS_PER_IP', 50, 1, 100_000),
    wsMessageRate: int(env, 'WS_MESSAGE_RATE', 20, 1, 1_000_000),
    // Room for the auth message, every channel subscribed and all of them resubscribed at once.
    wsMessageBurst: int(env, 'WS_MESSAGE_BURST', 2 * wsMaxSubscriptions + 50, 1, 1_000_000),
    wsCoalesceMs: int(env, 'WS_COALESCE_MS', 0, 0, 5),
    webhookRetrySchedule: schedule(env, 'WEBHOOK_RETRY_SCHEDULE', [0, 30, 120, 600, 3600, 21600]),
    webhookTimeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 60_000),
    webhookMaxInFlight: int(env, 'WEBHOOK_MAX_IN_FLIGHT', 256, 1, 100_000),
    webhookAllowPrivateTargets: bool(env, 'WEBHOOK_ALLOW_PRIVATE_TARGETS', appEnv !== 'production'),
    webhookPollMs: int(env, 'WEBHOOK_POLL_MS', 200, 10, 60_000),
    sqliteCheckpointIntervalMs: int(env, 'SQLITE_CHECKPOINT_INTERVAL_MS', 25, 0, 60_000),
    indexSampleIntervalMs,
    indexHistoryDays,
    rankSampleIntervalMs,
    rankHistoryDays,
    rfqHouseSpreadCents: int(env, 'RFQ_HOUSE_SPREAD_CENTS', 4, 1, 48),
    passwordScryptCost,
  };
}

/**
 * PASSWORD_SCRYPT_COST: a power of two in 1024..1048576 (2^20 is 1 GiB of scrypt memory). Lower
 * than the default only off production: it exists so test suites that register hundreds of
 * accounts do not spend minutes hashing.
 */
function scryptCost(env: Env, appEnv: AppEnv): number {
  const n = int(env, 'PASSWORD_SCRYPT_COST', DEFAULT_PASSWORD_SCRYPT_COST, 1024, 1_048_576);
  if ((n & (n - 1)) !== 0) {
    throw new ConfigError('PASSWORD_SCRYPT_COST', `must be a power of two, got ${n}`);
  }
  if (appEnv === 'production' && n < DEFAULT_PASSWORD_SCRYPT_COST) {
    throw new ConfigError(
      'PASSWORD_SCRYPT_COST',
      `must be at least ${DEFAULT_PASSWORD_SCRYPT_COST} when APP_ENV is production, got ${n}`,
    );
  }
  return n;
}

/**
 * smtp://host[:port] or smtps://..., credentials allowed. The value is never echoed: it may hold
 * a password.
 */
function smtpUrlChecked(v: string): void {
  if (!/^smtps?:\/\//.test(v)) {
    throw new ConfigError('SMTP_URL', 'must start with smtp:// or smtps://');
  }
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    throw new ConfigError('SMTP_URL', 'must be a URL like smtp://user:password@mail.example:587');
  }
  if (url.hostname === '') {
    throw new ConfigError(
      'SMTP_URL',
      'must name the mail server, like smtp://mail.example:587 (no host given)',
    );
  }
}

/**
 * redis://[user:password@]host[:port][/db] or rediss://... The value is never echoed: it may hold
 * a password.
 */
function redisUrlChecked(v: string): void {
  let url: URL | null = null;
  try {
    url = new URL(v);
  } catch {
    // reported below
  }
  if (url === null || !['redis:', 'rediss:'].includes(url.protocol) || url.hostname === '') {
    throw new ConfigError(
      'REDIS_URL',
      'must be a URL like redis://127.0.0.1:6379 or rediss://user:password@host:6380/0',
    );
  }
  if (!/^\/?\d{0,2}$/.test(url.pathname)) {
    throw new ConfigError('REDIS_URL', 'may name a database number only, like redis://host:6379/0');
  }
}

/**
 * postgres://[user[:password]@]host[:port]/database[?options] (or postgresql://). The value is
 * never echoed: it may hold a password. The database must be named: the service's schemas go in it.
 */
function databaseUrlChecked(v: string): void {
  let url: URL | null = null;
  try {
    url = new URL(v);
  } catch {
    // reported below
  }
  if (url === null || !['postgres:', 'postgresql:'].includes(url.protocol) || url.hostname === '') {
    throw new ConfigError(
      'DATABASE_URL',
      'must be a URL like postgres://user:password@127.0.0.1:5432/exchange',
    );
  }
  if (!/^\/[^/]+$/.test(url.pathname)) {
    throw new ConfigError(
      'DATABASE_URL',
      'must name the database, like postgres://user@host:5432/exchange',
    );
  }
}

/** YYYY-MM-DD naming a day that exists (2026-02-30 does not). */
function isCalendarDate(s: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(s)) return false;
  const d = new Date(`${s}T00:00:00.000Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
}
