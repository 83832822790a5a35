import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { RedisServer } from '../../../test/support/redis-server.js';
import { loadConfig } from '../../config/app-config.js';
import { ConfigService } from '../../config/config.service.js';
import { LocalClusterSignals, type ClusterSignal, type ClusterSignals } from './cluster-signals.js';
import { RedisClusterSignals, SIGNAL_CHANNEL } from './redis-cluster-signals.js';
import { RedisConnection } from './redis-connection.js';
import { prefixedChannel } from './redis-key-prefix.js';

let server: RedisServer;
const connections: RedisConnection[] = [];
const buses: RedisClusterSignals[] = [];

async function redisSignals(): Promise<RedisClusterSignals> {
  const c = new RedisConnection(
    new ConfigService(loadConfig({ REDIS_URL: server.url }), {
      jwtSecret: 'x'.repeat(32),
      encryptionKey: '0'.repeat(64),
    }),
  );
  connections.push(c);
  await c.onModuleInit();
  const s = new RedisClusterSignals(c.client!);
  buses.push(s);
  await until(() => s.listening);
  return s;
}

async function until(ok: () => boolean, ms = 3000): Promise<void> {
  const t0 = Date.now();
  while (!ok()) {
    if (Date.now() - t0 > ms) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Every signal of `kind` the instance applies, in order. */
function heard(s: ClusterSignals, kind: ClusterSignal['kind']): ClusterSignal[] {
  const got: ClusterSignal[] = [];
  s.on(kind, (x) => got.push(x));
  return got;
}

beforeAll(async () => {
  server = await RedisServer.start();
});
afterAll(async () => {
  for (const b of buses) b.onApplicationShutdown();
  for (const c of connections) c.onApplicationShutdown();
  await server.stop();
});

describe('LocalClusterSignals', () => {
  it('applies a signal to its listeners at once; an unsubscribed or throwing one does not stop it', () => {
    const s = new LocalClusterSignals();
    const got = heard(s, 'key.revoked');
    const off = s.on('key.revoked', () => {
      throw new Error('a broken listener');
    });
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    s.publish({ kind: 'key.revoked', keyId: 'key_1' });
    expect(got).toEqual([{ kind: 'key.revoked', keyId: 'key_1' }]);
    expect(logged).toHaveBeenCalledTimes(1);
    off();
    s.publish({ kind: 'key.revoked', keyId: 'key_2' });
    expect(got).toHaveLength(2);
    expect(logged).toHaveBeenCalledTimes(1);
    logged.mockRestore();
    expect(s.cacheTtlMs).toBeNull();
  });
});

describe('RedisClusterSignals', () => {
  it('applies a signal once on the publisher (before publish returns) and once on every other instance', async () => {
    const a = await redisSignals();
    const b = await redisSignals();
    const onA = heard(a, 'key.rotated');
    const onB = heard(b, 'key.rotated');
    const otherKind = heard(b, 'key.revoked');
    a.publish({ kind: 'key.rotated', keyId: 'key_r' });
    expect(onA).toEqual([{ kind: 'key.rotated', keyId: 'key_r' }]);
    await until(() => onB.length === 1);
    expect(onB).toEqual([{ kind: 'key.rotated', keyId: 'key_r' }]);
    // A round trip later nothing more arrived: not A's own echo, not a second copy on B.
    b.publish({ kind: 'key.revoked', keyId: 'key_x' });
    await until(() => otherKind.length === 1);
    await new Promise((r) => setTimeout(r, 50));
    expect(onA).toHaveLength(1);
    expect(onB).toHaveLength(1);
    expect(a.cacheTtlMs).toBe(5_000);
  });

  it('ignores what is not a signal on its channel', async () => {
    const a = await redisSignals();
    const got = heard(a, 'webhook-endpoint.changed');
    const channel = prefixedChannel(connections[0].client!, SIGNAL_CHANNEL);
    await connections[0].client!.publish(channel, 'not json');
    await connections[0].client!.publish(
      channel,
      JSON.stringify({ from: 'x', signal: { kind: 'nope' } }),
    );
    await connections[0].client!.publish(
      channel,
      JSON.stringify({
        from: 'x',
        signal: { kind: 'webhook-endpoint.changed', endpointId: 'whe_1' },
      }),
    );
    await until(() => got.length === 1);
    expect(got).toEqual([{ kind: 'webhook-endpoint.changed', endpointId: 'whe_1' }]);
  });

  it('Redis down: a publish still applies here, never throws, and warns once per window', async () => {
    const a = await redisSignals();
    const got = heard(a, 'key.changed');
    const warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    await server.stop();
    await until(() => connections.every((c) => !c.ready));
    a.publish({ kind: 'key.changed', keyId: 'key_1' });
    a.publish({ kind: 'key.changed', keyId: 'key_2' });
    expect(got.map((s) => (s as { keyId: string }).keyId)).toEqual(['key_1', 'key_2']);
    const mine = warned.mock.calls.filter(([m]) =>
      String(m).includes('applied on this instance only'),
    );
    expect(mine).toHaveLength(1);
    warned.mockRestore();
    // Back (a fresh, empty server): the subscriber subscribes again and hears the others.
    await server.start();
    await until(() => a.listening, 5000);
    const b = await redisSignals();
    b.publish({ kind: 'key.changed', keyId: 'key_3' });
    await until(() => got.length === 3);
    expect((got[2] as { keyId: string }).keyId).toBe('key_3');
  });
});
