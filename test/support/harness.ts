import { jest } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createApp } from '../../src/app.factory.js';
import { ManualClock, type Clock } from '../../src/common/clock/clock.js';
import { loadConfig } from '../../src/config/app-config.js';
import type { LimitStore } from '../../src/modules/limits/limit-store.js';
import { runContractStore } from './contract-store.js';
import { assertNotSqlitePassOnly } from './pass-guard.js';
import { fillFromTemplate } from './data-dir-template.js';
import { testScryptCost } from './scrypt-cost.js';
import { assertStatementsListed, watchStatements } from './statement-log.js';
import {
  databaseUrlFor,
  dropDatabaseLater,
  testDatabaseIsPostgres,
  testRedisUrl,
} from './test-database.js';

export { TEST_SCRYPT_COST, testScryptCost } from './scrypt-cost.js';

// jest.config.js gives the e2e project testTimeout 60000, but Jest reads testTimeout only from the
// top-level config, so e2e tests ran with the 5 s default. Every e2e file imports this module.
// On PostgreSQL (TEST_DATABASE=postgres) a file's first boot also starts a cluster and builds its
// seeded template database: its hooks get longer.
jest.setTimeout(testDatabaseIsPostgres() ? 180_000 : 60_000);

export interface Running {
  baseUrl: string;
  api: string;
  dataDir: string;
  clock: Clock;
  /** Every JSON log line the app wrote. */
  logs: string[];
  /** The Nest application (for tests that need to reach inside, e.g. to break a database). */
  app: NestFastifyApplication;
  close(opts?: { keepData?: boolean }): Promise<void>;
}

export interface StartOptions {
  /**
   * Environment of the app. PASSWORD_SCRYPT_COST defaults to {@link TEST_SCRYPT_COST} (see
   * {@link testScryptCost}); set it to '' for the production default (32768).
   */
  env?: Record<string, string>;
  /** A fixed clock start (ISO); omitted: a ManualClock at 2026-11-22T12:00:00Z. */
  now?: string;
  clock?: Clock;
  dataDir?: string;
  /** A limit store to use instead of the in-process one (fail-open tests). */
  limitStore?: LimitStore;
  /**
   * Boots on SQLite files in the PostgreSQL pass too: for the cases about those files themselves
   * (WAL checkpoints, a world file cut short, what the files hold), which have no PostgreSQL
   * counterpart to run.
   */
  sqliteFiles?: boolean;
}

/**
 * Boots the real app on a real port (127.0.0.1, ephemeral) with a temporary DATA_DIR (its
 * databases copied from a migrated and seeded template when the seeding clock is a ManualClock,
 * see data-dir-template.ts).
 */
export async function startApp(opts: StartOptions = {}): Promise<Running> {
  watchStatements();
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'svc-e2e-'));
  const onPassDatabase = opts.env?.DATABASE_URL === undefined && opts.sqliteFiles !== true;
  if (onPassDatabase) assertNotSqlitePassOnly('it boots an app on the pass database (startApp)');
  const postgres = testDatabaseIsPostgres() && onPassDatabase;
  const env = {
    LOG_LEVEL: 'info',
    ...testScryptCost(opts.env),
    ...opts.env,
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
  };
  let config = loadConfig(env);
  const logs: string[] = [];
  const logStream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      logs.push(
        ...chunk
          .toString('utf8')
          .split('\n')
          .filter((l) => l !== ''),
      );
      cb();
    },
  });
  const clock = opts.clock ?? new ManualClock(opts.now ?? '2026-11-22T12:00:00.000Z');
  if (postgres) {
    // A ManualClock boot starts from a seeded template database, as from a file template.
    const seeded =
      opts.dataDir === undefined && clock instanceof ManualClock
        ? { config, now: clock.now() }
        : undefined;
    config = loadConfig({
      // A test that sets REDIS_URL itself (a Redis it stops, say) keeps it.
      REDIS_URL: await testRedisUrl(),
      ...env,
      DATABASE_URL: await databaseUrlFor(dataDir, seeded),
    });
  }
  // The file template holds SQLite databases; on PostgreSQL the app migrates and seeds its own.
  if (opts.dataDir === undefined && !postgres) await fillFromTemplate(dataDir, config, clock);
  const created = await createApp({
    config,
    clock,
    logStream,
    limitStore: opts.limitStore,
    contractStore: runContractStore(),
  });
  const { app } = created;
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.getHttpServer().address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  const baseUrl = `http://127.0.0.1:${address.port}`;
  return {
    baseUrl,
    api: `${baseUrl}/api/v1`,
    dataDir,
    clock,
    logs,
    app,
    async close(closeOpts) {
      await created.close();
      if (closeOpts?.keepData !== true) {
        rmSync(dataDir, { recursive: true, force: true });
        if (postgres) dropDatabaseLater(dataDir);
      }
      assertStatementsListed();
    },
  };
}

// Response bodies are JSON of many shapes; tests read them field by field.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface JsonResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** fetch + JSON parse, never throws on HTTP status. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function http<T = any>(
  url: string,
  init: RequestInit & { json?: unknown } = {},
): Promise<JsonResponse<T>> {
  const { json, ...rest } = init;
  const headers = new Headers(rest.headers);
  let body = rest.body;
  if (json !== undefined) {
    headers.set('content-type', 'application/json');
    body = JSON.stringify(json);
  }
  const res = await fetch(url, { ...rest, headers, body, redirect: 'manual' });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

/** The `error` object of the contract's error body. */
export interface ContractError {
  code: string;
  message: string;
  status: number;
  request_id: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  details: any;
}

/** Asserts the contract's error body and returns it. */
export function expectError(res: JsonResponse, status: number, code: string): ContractError {
  const err = res.body?.error;
  if (res.status !== status || err?.code !== code) {
    throw new Error(`expected ${status} ${code}, got ${res.status} ${res.text.slice(0, 500)}`);
  }
  if (
    typeof err.message !== 'string' ||
    err.status !== status ||
    err.request_id !== res.headers.get('x-request-id') ||
    typeof err.details !== 'object'
  ) {
    throw new Error(`malformed error body: ${res.text}`);
  }
  return err;
}

const ERROR_KEYS = ['code', 'details', 'message', 'request_id', 'status'];

/**
 * Stricter than {@link expectError}: the body is exactly `{"error": {code, message, status,
 * request_id, details}}` with nothing else, served as JSON with `Svc-API-Version: v1` and an
 * `X-Request-Id` equal to `error.request_id`.
 */
export function expectContractError(
  res: JsonResponse,
  status: number,
  code: string,
): ContractError {
  const err = expectError(res, status, code);
  const problems: string[] = [];
  if (Object.keys(res.body as object).join(',') !== 'error') problems.push('top-level keys');
  if (Object.keys(err).sort().join(',') !== ERROR_KEYS.join(',')) problems.push('error keys');
  if (!/^[A-Z][A-Z0-9_]*$/.test(err.code)) problems.push('code is not UPPER_SNAKE');
  if (err.message.length === 0) problems.push('empty message');
  if (err.details === null || Array.isArray(err.details)) problems.push('details not an object');
  if (res.headers.get('svc-api-version') !== 'v1') problems.push('Svc-API-Version');
  if (!(res.headers.get('content-type') ?? '').startsWith('application/json')) {
    problems.push('content-type');
  }
  if (problems.length > 0) throw new Error(`${problems.join(', ')}: ${res.text}`);
  return err;
}

export interface RawResponse {
  status: number;
  /** Header names lower-cased. */
  headers: Record<string, string>;
  body: string;
  raw: string;
}

/**
 * Sends bytes as they are over a fresh TCP connection (for requests fetch refuses to make, such as
 * malformed HTTP) and returns the first response, parsed loosely; the socket is given up after
 * `timeoutMs` without a byte.
 */
export function rawRequest(
  baseUrl: string,
  payload: string | Buffer,
  timeoutMs = 5000,
): Promise<RawResponse> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect({ host: hostname, port: Number(port) }, () => socket.write(payload));
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error('raw request timed out')));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', (e) => (chunks.length > 0 ? finish() : reject(e)));
    socket.on('end', () => finish());
    socket.on('close', () => finish());
    let done = false;
    function finish(): void {
      if (done) return;
      done = true;
      socket.destroy();
      const raw = Buffer.concat(chunks).toString('utf8');
      const sep = raw.indexOf('\r\n\r\n');
      const head = sep < 0 ? raw : raw.slice(0, sep);
      const [statusLine, ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines) {
        const i = l.indexOf(':');
        if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1] ?? NaN);
      resolve({ status, headers, body: sep < 0 ? '' : raw.slice(sep + 4), raw });
    }
  });
}

/** The parsed JSON log lines of a running app. */
export function logLines(svc: Pick<Running, 'logs'>): Record<string, unknown>[] {
  return svc.logs.map((l) => JSON.parse(l) as Record<string, unknown>);
}
