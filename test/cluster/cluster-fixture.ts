import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import { randomUUID } from 'node:crypto';
import { http, type JsonResponse } from '../support/harness.js';
import { approveTier, keyFor, type Trader } from '../support/orders.js';
import { sessionFor } from '../support/keys.js';
import { spawnService, waitReady, type ServiceProcess } from '../support/process.js';
import { startPlatformServices, type PlatformServices } from '../support/services.js';

/** Three instances of the service on one PostgreSQL and one Redis, as behind a load balancer. */
export interface Cluster {
  services: PlatformServices;
  instances: ServiceProcess[];
  /** Starts one more instance on the same database and Redis (a replacement after a kill). */
  spawn(): Promise<ServiceProcess>;
  stop(): Promise<void>;
}

export interface ClusterOptions {
  /**
   * Another Redis than the services' one: a RedisServer (test/support/redis-server.ts) the test
   * stops and starts on one port (the services script takes PostgreSQL down when its Redis exits).
   */
  redisUrl?: string;
  /** More environment for every instance. */
  env?: Record<string, string>;
}

export async function startCluster(count = 3, options: ClusterOptions = {}): Promise<Cluster> {
  const services = await startPlatformServices();
  // The instances share the secrets (sessions and keys are checked on every instance).
  const env = {
    ...options.env,
    DATABASE_URL: services.databaseUrl,
    REDIS_URL: options.redisUrl ?? services.redisUrl,
    JWT_SECRET: randomBytes(24).toString('hex'),
    SECRETS_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    // Clients come through a load balancer on this host; X-Forwarded-For names each client.
    TRUSTED_PROXIES: '127.0.0.1',
    LOG_LEVEL: 'info',
  };
  const instances: ServiceProcess[] = [];
  const spawn = async (): Promise<ServiceProcess> => {
    const svc = await spawnService({ env });
    instances.push(svc);
    await waitReady(svc, 150_000);
    return svc;
  };
  const stop = async (): Promise<void> => {
    await Promise.all(instances.map((i) => i.stop('SIGTERM', 10_000)));
    saveLogs(instances);
    await services.stop();
  };
  try {
    // The first migrates and seeds the database; the others start on it together.
    await spawn();
    await Promise.all(Array.from({ length: count - 1 }, () => spawn()));
  } catch (err) {
    await stop();
    throw err;
  }
  return { services, instances, spawn, stop };
}

/**
 * CLUSTER_LOGS_DIR=<dir>: each instance's stdout and stderr are written there when the cluster
 * stops (`<pid>.out`, `<pid>.err`, in a directory per cluster), to follow a failover afterwards.
 */
function saveLogs(instances: readonly ServiceProcess[]): void {
  const root = process.env.CLUSTER_LOGS_DIR;
  if (root === undefined || root === '') return;
  const dir = join(root, String(Date.now()));
  mkdirSync(dir, { recursive: true });
  for (const i of instances) {
    writeFileSync(join(dir, `${i.proc.pid}.out`), i.stdout());
    writeFileSync(join(dir, `${i.proc.pid}.err`), i.stderr());
  }
}

/** The instance that writes the world now, from cluster_writers (holder: `host:pid:random`). */
export async function writerOf(
  admin: pg.Client,
  instances: readonly ServiceProcess[],
  world = 'test',
): Promise<ServiceProcess | undefined> {
  const r = await admin.query<{ holder: string }>(
    'SELECT holder FROM platform.cluster_writers WHERE world = $1',
    [world],
  );
  const pid = Number(r.rows[0]?.holder.split(':')[1]);
  return instances.find((i) => i.proc.pid === pid && alive(i));
}

/** Not exited, and not killed (a SIGKILLed child keeps exitCode null, with signalCode set). */
export function alive(svc: ServiceProcess): boolean {
  return svc.proc.exitCode === null && svc.proc.signalCode === null && !svc.proc.killed;
}

/** Waits until some live instance holds the world's writer role. */
export async function waitWriter(
  admin: pg.Client,
  instances: readonly ServiceProcess[],
  world = 'test',
  timeoutMs = 20_000,
): Promise<ServiceProcess> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const w = await writerOf(admin, instances, world);
    if (w !== undefined) return w;
    if (Date.now() > deadline) throw new Error(`no writer of ${world} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The seeded trader with an ENTERPRISE test key (6,000 requests a minute across instances). */
export async function enterpriseTrader(svc: ServiceProcess): Promise<Trader> {
  const email = 'trader@sandbox.test';
  const t = await keyFor(svc, email, await sessionFor(svc.api, email), {
    scopes: ['orders:read', 'orders:write', 'markets:read', 'wallet:read', 'websocket'],
  });
  await approveTier(svc, t, 'ENTERPRISE');
  return t;
}

/** An OPEN paper market to rest orders on (far from the house's quotes: nothing fills). */
export async function openMarket(svc: ServiceProcess, t: Trader): Promise<string> {
  const res = await http(`${svc.api}/markets?status=OPEN&limit=1`, {
    headers: { 'x-api-key': t.key },
  });
  if (res.status !== 200 || res.body.data.length === 0) {
    throw new Error(`no open market: ${res.status} ${res.text}`);
  }
  return res.body.data[0].id as string;
}

/** An answer and how long it took (ms, from the call to the parsed body). */
export interface Timed {
  res: JsonResponse;
  ms: number;
}

/** The timing wrapper: the same call, answering {@link Timed}. */
export function timed<A extends unknown[]>(
  call: (...args: A) => Promise<JsonResponse>,
): (...args: A) => Promise<Timed> {
  return async (...args: A) => {
    const started = Date.now();
    const res = await call(...args);
    return { res, ms: Date.now() - started };
  };
}

export interface PlaceOptions {
  /** Cents; default 5 (far under the house's quotes: the order rests). */
  price?: number;
  /** The Idempotency-Key; default a new one. */
  key?: string;
  /** Another API key than the trader's. */
  apiKey?: string;
}

/** A trader's requests to any instance of a cluster, each from a client address of its own. */
export interface ClusterClient {
  /** X-API-Key (the trader's, or `apiKey`) and the next client address in the subnet. */
  headers(apiKey?: string): Record<string, string>;
  /** POST /orders: a LIMIT bid for one YES contract of the market (resting, far from quotes). */
  place(svc: ServiceProcess, o?: PlaceOptions): Promise<JsonResponse>;
  /** GET `path` (under /api/v1) with {@link headers}, or the headers given. */
  get(svc: ServiceProcess, path: string, headers?: Record<string, string>): Promise<JsonResponse>;
  /** The same calls with the time each took. */
  timed: {
    place(svc: ServiceProcess, o?: PlaceOptions): Promise<Timed>;
    get(svc: ServiceProcess, path: string, headers?: Record<string, string>): Promise<Timed>;
  };
  /** Ids of the orders place() got 201 for, in answer order. */
  acked: string[];
}

/**
 * The trader's client for a cluster suite: requests carry `X-Forwarded-For: 10.<subnet>.x.y`,
 * a new address per request (the instances trust the local load balancer), because the per-IP
 * ceiling is not what the suites measure; each suite takes its own subnet. A request not
 * answered in `timeoutMs` fails (a hang is a failure, never a wait).
 */
export function clusterClient(
  trader: Trader,
  market: string,
  subnet: number,
  timeoutMs = 15_000,
): ClusterClient {
  let n = 0;
  const headers = (apiKey = trader.key): Record<string, string> => {
    const i = n++;
    return {
      'x-api-key': apiKey,
      'x-forwarded-for': `10.${subnet}.${Math.floor(i / 250) % 250}.${(i % 250) + 1}`,
    };
  };
  const acked: string[] = [];
  const place = async (svc: ServiceProcess, o: PlaceOptions = {}): Promise<JsonResponse> => {
    const res = await http(`${svc.api}/orders`, {
      method: 'POST',
      headers: { ...headers(o.apiKey), 'idempotency-key': o.key ?? randomUUID() },
      json: {
        market_id: market,
        action: 'BUY',
        side: 'YES',
        type: 'LIMIT',
        price: o.price ?? 5,
        quantity: 1,
      },
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (res.status === 201) acked.push(res.body.id as string);
    return res;
  };
  const get = (
    svc: ServiceProcess,
    path: string,
    auth: Record<string, string> = headers(),
  ): Promise<JsonResponse> =>
    http(`${svc.api}${path}`, { headers: auth, signal: AbortSignal.timeout(timeoutMs) });
  return { headers, place, get, timed: { place: timed(place), get: timed(get) }, acked };
}
