import { describe, expect, it } from '@jest/globals';
import {
  Controller,
  Inject,
  Injectable,
  Module,
  Post,
  type BeforeApplicationShutdown,
  type OnApplicationShutdown,
  type OnModuleDestroy,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import pino from 'pino';
import { ClusterService } from '../../modules/cluster/cluster.service.js';
import { installGracefulDrain } from './graceful-drain.js';
import { pipelineServices } from './pipeline/pipeline-state.js';

/** What happened, in order: the shutdown steps and the in-flight request's commit. */
const events: string[] = [];
/** Holds the request in its handler until the test lets it commit. */
let release: () => void = () => undefined;
let entered: () => void = () => undefined;

/** Stands in for the services whose hooks make the shutdown order (see graceful-drain.ts). */
@Injectable()
class Node implements OnModuleDestroy, BeforeApplicationShutdown, OnApplicationShutdown {
  writer = true;
  connected = true;
  onModuleDestroy(): void {
    events.push('timers stopped');
  }
  beforeApplicationShutdown(): void {
    this.writer = false; // ClusterService resigns its writer terms here
    events.push('writer resigned');
  }
  onApplicationShutdown(): void {
    this.connected = false;
    events.push('redis and databases closed');
  }
}

@Controller('orders')
class Orders {
  constructor(@Inject(Node) private readonly node: Node) {}
  @Post()
  async place(): Promise<{ writer: boolean }> {
    const gate = new Promise<void>((r) => (release = r));
    entered();
    await gate;
    // The commit's fence: a deposed writer (or a closed database) is refused.
    const ok = this.node.writer && this.node.connected;
    events.push(ok ? 'committed as the writer' : 'fenced off');
    return { writer: ok };
  }
}

@Module({ controllers: [Orders], providers: [Node] })
class TestModule {}

async function start(drainMs: number): Promise<{ app: NestFastifyApplication; url: string }> {
  events.length = 0;
  const adapter = new FastifyAdapter();
  installGracefulDrain(adapter, pipelineServices(), drainMs, pino({ level: 'silent' }));
  const app = await NestFactory.create<NestFastifyApplication>(TestModule, adapter, {
    logger: false,
  });
  await app.listen(0, '127.0.0.1');
  return { app, url: `${await app.getUrl()}/orders`.replace('[::1]', '127.0.0.1') };
}

describe('graceful drain: the shutdown order', () => {
  it('an order in flight at app.close() commits while this node is still the writer; then timers, writer terms, connections', async () => {
    const { app, url } = await start(5_000);
    const inHandler = new Promise<void>((r) => (entered = r));
    const answer = fetch(url, { method: 'POST' });
    await inHandler;
    const closing = app.close();
    await new Promise((r) => setTimeout(r, 150));
    // Still draining: nothing stopped yet while the request runs.
    expect(events).toEqual([]);
    release();
    const res = await answer;
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ writer: true });
    await closing;
    expect(events).toEqual([
      'committed as the writer',
      'timers stopped',
      'writer resigned',
      'redis and databases closed',
    ]);
  });

  it('a request stalled past SHUTDOWN_DRAIN_MS does not hold the shutdown: its connection is closed', async () => {
    const { app, url } = await start(200);
    const inHandler = new Promise<void>((r) => (entered = r));
    const answer = fetch(url, { method: 'POST' }).then(
      (r) => r.status,
      () => 'connection closed',
    );
    await inHandler;
    const t0 = performance.now();
    await app.close();
    expect(performance.now() - t0).toBeLessThan(3_000);
    expect(await answer).toBe('connection closed');
    expect(events).toEqual(['timers stopped', 'writer resigned', 'redis and databases closed']);
    release(); // the handler ends now: too late, the connections are closed
  });

  it('ClusterService resigns its writer terms before the application-shutdown hooks, not at module destroy', () => {
    const hooks = ClusterService.prototype as unknown as Record<string, unknown>;
    expect(typeof hooks.beforeApplicationShutdown).toBe('function');
    expect(hooks.onModuleDestroy).toBeUndefined();
    expect(hooks.onApplicationShutdown).toBeUndefined();
  });
});
