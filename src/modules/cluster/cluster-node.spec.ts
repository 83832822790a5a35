import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { startPlatformServices, type PlatformServices } from '../../../test/support/services.js';
import { WriterUnavailableError } from './cluster-errors.js';
import { ClusterNode } from './cluster-node.js';

/**
 * Two instances on one PostgreSQL and one Redis (`npm run services`, one for the file): one is
 * the world's writer and runs every command, the other forwards; when the writer's session
 * dies, the other takes over and runs them itself, and the deposed one forwards to it.
 */
let services: PlatformServices;
let admin: PlatformServices['admin'];
const nodes: ClusterNode[] = [];
const redises: Redis[] = [];
const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };

beforeAll(async () => {
  services = await startPlatformServices();
  admin = services.admin;
}, 120_000);

afterEach(async () => {
  await Promise.all(nodes.splice(0).map((n) => n.stop()));
  for (const r of redises.splice(0)) r.disconnect();
});

afterAll(async () => {
  await services?.stop();
}, 60_000);

interface Log {
  terms: string[];
  ran: string[];
}

async function node(instanceId: string, log: Log): Promise<ClusterNode> {
  const redis = new Redis(services.redisUrl, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
  });
  redis.on('error', () => undefined);
  redises.push(redis);
  await new Promise((r) => redis.once('ready', r));
  const n: ClusterNode = new ClusterNode({
    databaseUrl: services.databaseUrl,
    redis,
    instanceId,
    retryMs: 200,
    forwardTimeoutMs: 2000,
    forwardGraceMs: 500,
    log: quiet,
    handler: (world, cmd): object => {
      log.ran.push(`${instanceId}:${cmd.op}`);
      return { ran_on: instanceId, world, epoch: n.election.epoch(world) };
    },
    onTerm: (world, epoch) => void log.terms.push(`${instanceId} writes ${world} @${epoch}`),
    onStepDown: (world) => void log.terms.push(`${instanceId} stops ${world}`),
  });
  nodes.push(n);
  return n;
}

async function until(what: string, ok: () => boolean, ms = 5000): Promise<number> {
  const start = Date.now();
  while (!ok()) {
    if (Date.now() - start > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return Date.now() - start;
}

describe('two instances', () => {
  it('run every command of a world on its one writer, forwarding from the other', async () => {
    const log: Log = { terms: [], ran: [] };
    const a = await node('a', log);
    // start() settles after the first round, with the term it won begun: a writes at once.
    await a.start(['test']);
    expect(a.isWriter('test')).toBe(true);
    expect(log.terms).toEqual(['a writes test @1']);
    const b = await node('b', log);
    await b.start(['test']);
    expect(b.isWriter('test')).toBe(false);

    const viaB = await b.execute('test', { op: 'orders.place', args: {} });
    const viaA = await a.execute('test', { op: 'orders.place', args: {} });
    expect(viaB).toEqual({ ran_on: 'a', world: 'test', epoch: 1 });
    expect(viaA).toEqual(viaB);
    expect(log.ran).toEqual(['a:orders.place', 'a:orders.place']);
  });

  it("fail over within 5 s when the writer's session dies: the new writer runs them, the deposed one forwards", async () => {
    const log: Log = { terms: [], ran: [] };
    const a = await node('a', log);
    await a.start(['wld_fo']);
    expect(a.isWriter('wld_fo')).toBe(true);
    const b = await node('b', log);
    await b.start(['wld_fo']);
    expect(await b.execute('wld_fo', { op: 'before', args: {} })).toMatchObject({ ran_on: 'a' });

    const killedAt = Date.now();
    await admin.query('SELECT pg_terminate_backend($1)', [a.election.session.backendPid]);
    await until('b to write', () => b.isWriter('wld_fo'));
    const failover = Date.now() - killedAt;
    expect(failover).toBeLessThan(5000);
    expect(a.isWriter('wld_fo')).toBe(false);
    expect(await a.execute('wld_fo', { op: 'after', args: {} })).toEqual({
      ran_on: 'b',
      world: 'wld_fo',
      epoch: 2,
    });
    expect(log.terms).toEqual(['a writes wld_fo @1', 'a stops wld_fo', 'b writes wld_fo @2']);
    expect(log.ran).toEqual(['a:before', 'b:after']);
  });

  it('answer 503 WRITER_UNAVAILABLE while no instance writes the world', async () => {
    const log: Log = { terms: [], ran: [] };
    const b = await node('b', log);
    // b serves other worlds, but nobody campaigns for this one.
    await b.start(['test']);
    const start = Date.now();
    await expect(b.execute('wld_orphan', { op: 'x', args: {} })).rejects.toBeInstanceOf(
      WriterUnavailableError,
    );
    expect(Date.now() - start).toBeLessThan(1000);
    expect(log.ran).toEqual([]);
  });
});
