/**
 * bench:worlds — ephemeral worlds (CONTRACT.md "Ephemeral worlds, scenarios and the webhook
 * workbench"). Boots the real app in this process over a temporary DATA_DIR and measures, over
 * HTTP with real keys:
 * - create: POST /sandbox/worlds, p50/p99 over CYCLES creates (the first create, which builds the
 *   migrated template once per process, is reported apart); target p99 < 20 ms;
 * - delete: DELETE /sandbox/worlds/{id} of those worlds, p50/p99;
 * - the same create and delete through EphemeralWorldsService directly (the world code without
 *   the HTTP pipeline and the client, which share this process);
 * - memory per loaded idle world: LOADED fresh worlds, each touched with one request so its file
 *   and engine are loaded, then garbage collected: RSS and heap delta / LOADED; target <= 5 MB;
 *   and how many loaded worlds the default limits (MAX_WORLDS_PER_USER) and the heap hold;
 * - orders/s: resting LIMIT orders (POST /orders) with a world key against the same with a key of
 *   the shared paper world, same client, same run, in alternating rounds (A B A B ...).
 * Prints the figures and writes bench/results/worlds.json.
 */
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { benchEnvironment } from './support/bench-environment.js';
import { startInProcessApp } from './support/in-process-app.js';
import { jsonClient, openMarkets, traderTestKey } from './support/api-client.js';
import { postRequest, RawHttpConnection } from './support/raw-http-client.js';
import { EngineRegistry } from '../src/modules/trading/engine-registry.js';
import { EphemeralWorldsService } from '../src/modules/worlds/ephemeral-worlds.service.js';
import type { WorldId } from '../src/common/environment.js';
import type { Scope } from '../src/common/api/scopes.js';
import type { Credential } from '../src/common/http/request-context.js';

const CYCLES = Number(process.env.BENCH_WORLD_CYCLES ?? 200);
const WARMUP = 5;
const LOADED = Number(process.env.BENCH_LOADED_WORLDS ?? 100);
const ROUNDS = 3; // rounds per side, alternating
const ROUND_MS = Number(process.env.BENCH_ROUND_MS ?? 2_000);
const CONNECTIONS = 8;
const DEFAULT_MAX_WORLDS_PER_USER = 20;
const CREATE_TARGET_P99_MS = 20;
const MEMORY_TARGET_MB = 5;
const SCOPES: Scope[] = [
  'markets:read',
  'orders:read',
  'orders:write',
  'wallet:read',
  'wallet:write',
];

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

function stats(ms: number[]): Record<string, number> {
  const s = [...ms].sort((a, b) => a - b);
  const r = (x: number) => Math.round(x * 1000) / 1000;
  return {
    n: s.length,
    min: r(s[0]),
    p50: r(pct(s, 50)),
    p90: r(pct(s, 90)),
    p99: r(pct(s, 99)),
    max: r(s[s.length - 1]),
    mean: r(s.reduce((a, b) => a + b, 0) / s.length),
  };
}

/** Settled memory: several collections so finalizers and weak maps let go. */
async function settledMemory(): Promise<{ rss: number; heap: number; external: number }> {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
  const m = process.memoryUsage();
  return { rss: m.rss, heap: m.heapUsed, external: m.external + m.arrayBuffers };
}

const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 1000) / 1000;

/**
 * Closed-loop load: CONNECTIONS keep-alive connections, each sending its next order as soon as the
 * last answered, for `ms`. Answers the 201s per second (anything else is counted and fails the run).
 */
async function placeFor(
  host: string,
  port: number,
  path: string,
  key: string,
  market: string,
  ms: number,
): Promise<{ orders_per_s: number; orders: number; non_201: number }> {
  const request = postRequest(
    host,
    path,
    { 'x-api-key': key },
    JSON.stringify({
      market_id: market,
      action: 'BUY',
      side: 'YES',
      type: 'LIMIT',
      price: 1,
      quantity: 1,
    }),
  );
  const conns = await Promise.all(
    Array.from({ length: CONNECTIONS }, () => RawHttpConnection.open(host, port)),
  );
  let ok = 0;
  let bad = 0;
  const t0 = performance.now();
  const end = t0 + ms;
  await Promise.all(
    conns.map(
      (c) =>
        new Promise<void>((resolve, reject) => {
          const next = (): void => {
            if (performance.now() >= end) {
              resolve();
              return;
            }
            c.send(
              request,
              (status) => {
                if (status === 201) ok++;
                else bad++;
                next();
              },
              reject,
            );
          };
          next();
        }),
    ),
  );
  const elapsed = performance.now() - t0;
  for (const c of conns) c.close();
  return { orders_per_s: Math.round((ok / elapsed) * 1000), orders: ok, non_201: bad };
}

async function main(): Promise<void> {
  const created = await startInProcessApp('worlds', {
    MAX_WORLDS_PER_USER: '1000',
    MAX_OPEN_ORDERS_PER_KEY: '1000000',
  });
  const { app } = created;
  try {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.getHttpServer().address() as { port: number };
    const host = '127.0.0.1';
    const api = `http://${host}:${port}/api/v1`;
    const json = jsonClient(api);
    const paper = await traderTestKey(json, SCOPES);
    const worlds = app.get(EphemeralWorldsService);
    const engines = app.get(EngineRegistry);
    const market = openMarkets(engines.get('test'))[0];
    const auth = { 'x-api-key': paper.key };

    const createWorld = async (body: Record<string, unknown> = {}) => {
      const t0 = performance.now();
      const r = await json('/sandbox/worlds', { method: 'POST', headers: auth, json: body });
      const ms = performance.now() - t0;
      if (r.status !== 201) throw new Error(`create: ${r.status} ${JSON.stringify(r.body)}`);
      return { id: String(r.body.id) as WorldId, key: String(r.body.key), ms };
    };
    const deleteWorld = async (id: string) => {
      const t0 = performance.now();
      const r = await fetch(`${api}/sandbox/worlds/${id}`, { method: 'DELETE', headers: auth });
      const ms = performance.now() - t0;
      await r.arrayBuffer();
      if (r.status !== 204) throw new Error(`delete ${id}: ${r.status}`);
      return ms;
    };

    // 1. Create and delete. The first create builds the template (once per process).
    const first = await createWorld();
    await deleteWorld(first.id);
    const createMs: number[] = [];
    const made: { id: WorldId; key: string }[] = [];
    for (let i = 0; i < WARMUP + CYCLES; i++) {
      const w = await createWorld({ seed: i });
      if (i >= WARMUP) createMs.push(w.ms);
      made.push(w);
    }
    const deleteMs: number[] = [];
    for (const [i, w] of made.entries()) {
      const ms = await deleteWorld(w.id);
      if (i >= WARMUP) deleteMs.push(ms);
    }
    const create = stats(createMs);
    const del = stats(deleteMs);
    console.log(
      `create p50 ${create.p50} ms p99 ${create.p99} ms; delete p50 ${del.p50} ms p99 ${del.p99} ms (first create ${Math.round(first.ms)} ms)`,
    );

    // 1b. The service path alone, as the controller calls it.
    const cred: Credential = {
      type: 'API_KEY',
      userId: paper.userId,
      keyId: paper.keyId,
      environment: 'test',
      world: 'test',
      scopes: SCOPES,
      tier: 'FREE',
    };
    const serviceCreateMs: number[] = [];
    const serviceDeleteMs: number[] = [];
    const serviceMade: string[] = [];
    for (let i = 0; i < WARMUP + CYCLES; i++) {
      const t0 = performance.now();
      const w = await worlds.create(cred, { seed: i });
      if (i >= WARMUP) serviceCreateMs.push(performance.now() - t0);
      serviceMade.push(w.id);
    }
    for (const [i, id] of serviceMade.entries()) {
      const t0 = performance.now();
      await worlds.delete(cred, id);
      if (i >= WARMUP) serviceDeleteMs.push(performance.now() - t0);
    }
    const serviceCreate = stats(serviceCreateMs);
    const serviceDelete = stats(serviceDeleteMs);
    console.log(
      `service path: create p50 ${serviceCreate.p50} ms p99 ${serviceCreate.p99} ms; delete p50 ${serviceDelete.p50} ms p99 ${serviceDelete.p99} ms`,
    );
    const templateBytes = statSync(join(created.dataDir, 'worlds', '.template.sqlite')).size;

    // 2. Memory per loaded idle world: LOADED fresh worlds (unloaded until their first request).
    const loadedSet: { id: WorldId; key: string }[] = [];
    for (let i = 0; i < LOADED; i++) loadedSet.push(await createWorld({ seed: 1000 + i }));
    const loadedBeforeTouch = loadedSet.filter((w) => worlds.isLoaded(w.id)).length;
    const before = await settledMemory();
    for (const w of loadedSet) {
      const r = await json(`/markets/${market}/orderbook?depth=1`, {
        headers: { 'x-api-key': w.key },
      });
      if (r.status !== 200) throw new Error(`touch ${w.id}: ${r.status}`);
    }
    const loadedCount = loadedSet.filter((w) => worlds.isLoaded(w.id)).length;
    if (loadedCount !== LOADED) throw new Error(`${loadedCount} of ${LOADED} worlds loaded`);
    const after = await settledMemory();
    const perWorld = {
      rss_mb: mb((after.rss - before.rss) / LOADED),
      heap_mb: mb((after.heap - before.heap) / LOADED),
      external_mb: mb((after.external - before.external) / LOADED),
    };
    const heapLimit = getHeapStatistics().heap_size_limit;
    const perWorldMax = Math.max(perWorld.rss_mb, perWorld.heap_mb);
    const fit = {
      max_worlds_per_user_default: DEFAULT_MAX_WORLDS_PER_USER,
      one_user_at_cap_rss_mb: Math.round(DEFAULT_MAX_WORLDS_PER_USER * perWorld.rss_mb * 10) / 10,
      heap_size_limit_mb: Math.round(mb(heapLimit)),
      loaded_worlds_in_heap_limit: Math.floor(mb(heapLimit - after.heap) / perWorld.heap_mb),
      users_at_cap_in_1_gb_rss: Math.floor(1024 / (DEFAULT_MAX_WORLDS_PER_USER * perWorldMax)),
    };
    console.log(
      `memory per loaded idle world: rss ${perWorld.rss_mb} MB, heap ${perWorld.heap_mb} MB (${LOADED} worlds, ${loadedBeforeTouch} loaded before the touch)`,
    );

    // 3. Orders/s: a world key against a paper key, same client, alternating rounds.
    const worldForOrders = loadedSet[0];
    const rounds: { side: 'world' | 'paper'; orders_per_s: number; orders: number }[] = [];
    // One short warm-up round each, not counted.
    await placeFor(host, port, '/api/v1/orders', worldForOrders.key, market, 500);
    await placeFor(host, port, '/api/v1/orders', paper.key, market, 500);
    for (let i = 0; i < ROUNDS * 2; i++) {
      const side = i % 2 === 0 ? 'world' : 'paper';
      const key = side === 'world' ? worldForOrders.key : paper.key;
      const r = await placeFor(host, port, '/api/v1/orders', key, market, ROUND_MS);
      if (r.non_201 > 0) throw new Error(`${side} round: ${r.non_201} answers were not 201`);
      rounds.push({ side, orders_per_s: r.orders_per_s, orders: r.orders });
      console.log(`round ${i + 1} ${side}: ${r.orders_per_s} orders/s`);
    }
    const mean = (side: string) => {
      const xs = rounds.filter((r) => r.side === side).map((r) => r.orders_per_s);
      return Math.round(xs.reduce((a, b) => a + b, 0) / xs.length);
    };
    const worldRate = mean('world');
    const paperRate = mean('paper');
    const ratio = Math.round((worldRate / paperRate) * 1000) / 1000;

    for (const w of loadedSet) await deleteWorld(w.id);

    const figures = {
      benchmark: 'worlds',
      create_ms: create,
      delete_ms: del,
      service_create_ms: serviceCreate,
      service_delete_ms: serviceDelete,
      template_bytes: templateBytes,
      first_create_ms_with_template_build: Math.round(first.ms * 10) / 10,
      create_target_p99_ms: CREATE_TARGET_P99_MS,
      create_meets_target: create.p99 < CREATE_TARGET_P99_MS,
      memory: {
        loaded_idle_worlds: LOADED,
        loaded_before_touch: loadedBeforeTouch,
        touched_with: 'GET /markets/{id}/orderbook?depth=1 with the world key',
        per_world: perWorld,
        total_rss_delta_mb: mb(after.rss - before.rss),
        total_heap_delta_mb: mb(after.heap - before.heap),
        target_mb: MEMORY_TARGET_MB,
        meets_target: perWorldMax <= MEMORY_TARGET_MB,
        fit,
      },
      orders: {
        order: 'LIMIT BUY YES 1 @ 1c (rests), POST /api/v1/orders',
        connections: CONNECTIONS,
        round_ms: ROUND_MS,
        rounds,
        world_orders_per_s: worldRate,
        paper_orders_per_s: paperRate,
        world_to_paper_ratio: ratio,
      },
      ...benchEnvironment('client and server in one process'),
    };
    console.log(JSON.stringify(figures, null, 2));
    console.log(
      `worlds: create p99 ${create.p99} ms (target < ${CREATE_TARGET_P99_MS}), ${perWorld.rss_mb} MB RSS / ${perWorld.heap_mb} MB heap per loaded world (target <= ${MEMORY_TARGET_MB}), orders/s world ${worldRate} vs paper ${paperRate} (${ratio}x)`,
    );
    mkdirSync('bench/results', { recursive: true });
    writeFileSync('bench/results/worlds.json', JSON.stringify(figures, null, 2) + '\n');
  } finally {
    await created.close();
  }
}

void main();
