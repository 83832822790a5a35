import { randomBytes, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import type { FastifyInstance } from 'fastify';
import { isWorldId, type WorldName } from '../../common/environment.js';
import { DomainError } from '../../common/errors/domain-error.js';
import {
  FORWARDED_HEADER,
  type ClusterGate,
  type ForwardedAnswer,
  type ForwardedRequest,
} from '../../common/http/pipeline/forward.stage.js';
import type { RequestContext } from '../../common/http/request-context.js';
import { ConfigService } from '../../config/config.service.js';
import { RedisConnection } from '../redis/redis-connection.js';
import { EngineRegistry } from '../trading/engine-registry.js';
import { WorldClocks } from '../worlds/world-clocks.service.js';
import { WorldWork } from '../worlds/world-work.js';
import { WriterUnavailableError } from './cluster-errors.js';
import { ClusterNode } from './cluster-node.js';
import type { ForwardedCommand } from './command-wire.js';
import { tryWorkLock } from './work-lock.js';

/** The forwarded-command operation of a whole HTTP request (the only one). */
const HTTP_OP = 'http';
/**
 * How long a request of a new ephemeral world waits, after the election round that included it,
 * for another instance's presence as its writer.
 */
const FIRST_ELECTION_MS = 1_500;

/**
 * Cluster mode (DATABASE_URL and REDIS_URL set): this instance's ClusterNode. It campaigns for
 * the worlds' writer roles, begins and ends the engines' terms (EngineRegistry.beginTerm), sends
 * world-bound requests of worlds it does not write to their writer (forward.stage.ts) and replays
 * those forwarded to it into its own Fastify instance. Outside cluster mode it does nothing.
 *
 * The replay is trusted by a one-time random token this process issues for it and keeps in
 * memory until the replay's answer: the token never leaves the process (the inject does not
 * touch the network), so no client can present one, and the receiving instance's resolved
 * credential is used instead of authenticating again.
 */
@Injectable()
export class ClusterService implements ClusterGate, BeforeApplicationShutdown {
  readonly instanceId = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private node: ClusterNode | null = null;
  private fastify: FastifyInstance | null = null;
  private readonly tokens = new Map<string, RequestContext>();
  private readonly campaigned = new Set<string>();
  /**
   * Per world this instance stood for since it started: its first election round with it, and
   * that round's term changes applied. Until it settles, a request of the world waits for it
   * rather than being forwarded to a writer nobody may be yet (an ephemeral world first loaded by
   * a WebSocket subscription campaigned without waiting, and an HTTP request right after it was
   * answered 503 WRITER_UNAVAILABLE on a lone instance).
   */
  private readonly firstRounds = new Map<string, Promise<void>>();
  private readonly settled = new Set<string>();
  private readonly log = new Logger('Cluster');

  constructor(
    private readonly config: ConfigService,
    private readonly redis: RedisConnection,
    private readonly engines: EngineRegistry,
    private readonly clocks: WorldClocks,
    private readonly work: WorldWork,
  ) {
    this.build();
  }

  /** Cluster mode: both DATABASE_URL and REDIS_URL are set. */
  get enabled(): boolean {
    return this.engines.clustered;
  }

  /**
   * Built with the service (leases are usable from the first lifecycle hook); campaigning and
   * forwarding start with start(), once the app is initialised (the engines are followers).
   */
  private build(): void {
    const databaseUrl = this.config.values.databaseUrl;
    const redis = this.redis.client;
    if (!this.enabled || databaseUrl === null || redis === null) return;
    const node = new ClusterNode({
      databaseUrl,
      redis,
      instanceId: this.instanceId,
      handler: (world, command) => this.replay(world, command),
      onTerm: (world, epoch) => {
        this.log.log(`writer of ${world} (epoch ${epoch}): restoring its engine`);
        this.engines.beginTerm(world as WorldName, epoch);
      },
      onStepDown: (world, epoch) => {
        this.log.warn(`no longer the writer of ${world} (epoch ${String(epoch)})`);
        this.engines.endTerm(world as WorldName);
      },
      log: this.log,
    });
    this.node = node;
    this.engines.cluster = {
      campaign: (world) => this.campaign(world),
      // Fenced off: the role is another's already; give it up, and stand again as a candidate.
      fenced: (world) => {
        void node.election.resign(world).then(() => node.campaign(world));
      },
      forward: (world, op, args) => node.forwarder.forward(world, { op, args }),
      lease: (name, step) => node.election.lease(name).run(step),
    };
    // An ephemeral world's create or delete holds its work lock: no peer's recovery removes it.
    this.work.locker = (world) => tryWorkLock(node.election.session, world);
  }

  /**
   * Campaigns for live and paper, and serves forwarded requests through this Fastify. Settles
   * after the first campaign round, the terms it won begun (ClusterNode.start), so the app
   * listens only once it writes the worlds nobody else holds.
   */
  async start(fastify: FastifyInstance): Promise<void> {
    if (this.node === null || this.fastify !== null) return;
    this.fastify = fastify;
    for (const w of ['live', 'test']) this.campaigned.add(w);
    this.log.log(`cluster instance ${this.instanceId} campaigning for live and test`);
    await this.node.start(['live', 'test']);
  }

  /** Whether this instance writes the world now (always true outside cluster mode). */
  isWriter(world: string): boolean {
    return this.node === null || this.node.isWriter(world);
  }

  private campaign(world: string): Promise<void> {
    const node = this.node;
    if (node === null) return Promise.resolve();
    let first = this.firstRounds.get(world);
    if (first !== undefined) return first;
    if (this.campaigned.has(world)) return Promise.resolve();
    this.campaigned.add(world);
    node.campaign(world);
    // A round begun after the campaign (the one in progress may not include it), then the term
    // it won begun. Shared by every request of the world meanwhile.
    first = node.election
      .nextRound()
      .then(() => node.applied())
      // A round that failed (PostgreSQL away) is logged by the election; the request is then
      // forwarded as any other, and answered 503 WRITER_UNAVAILABLE if no writer is reached.
      .catch(() => undefined)
      .finally(() => this.settled.add(world));
    this.firstRounds.set(world, first);
    return first;
  }

  async forward(world: string, request: ForwardedRequest): Promise<ForwardedAnswer | null> {
    const answer = await this.forwardOnce(world, request);
    // The writer's clock of the world, as it answered: a move it just made (POST /sandbox/clock
    // with the world's key) holds here before the answer does, whether or not its signal came.
    if (answer?.clockOffsetMs !== undefined) this.clocks.follow(world, answer.clockOffsetMs);
    return answer;
  }

  private async forwardOnce(
    world: string,
    request: ForwardedRequest,
  ): Promise<ForwardedAnswer | null> {
    const node = this.node;
    if (node === null || node.isWriter(world)) return null;
    if (!isWorldId(world) || this.settled.has(world)) {
      return node.forwarder.forward<ForwardedAnswer>(world, { op: HTTP_OP, args: request });
    }
    // An ephemeral world whose first election round here has not settled: stand (if nothing here
    // has yet), and wait for a round that includes it (the one in progress may not: a burst of new
    // worlds waited for the next timer round and answered 503 on a lone instance) and for the term
    // it won to begin. Then serve it, or forward it to the writer another instance is (its
    // presence may take a moment).
    await this.campaign(world);
    const deadline = Date.now() + FIRST_ELECTION_MS;
    for (;;) {
      if (node.isWriter(world)) return null;
      try {
        return await node.forwarder.forward<ForwardedAnswer>(world, { op: HTTP_OP, args: request });
      } catch (err) {
        if (!(err instanceof WriterUnavailableError) || Date.now() >= deadline) throw err;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  trusted(token: string): RequestContext | undefined {
    const svc = this.tokens.get(token);
    this.tokens.delete(token);
    return svc;
  }

  /** The writer's side: a forwarded request, run through this instance's own pipeline. */
  private async replay(world: string, command: ForwardedCommand): Promise<unknown> {
    if (command.op !== HTTP_OP)
      return this.engines.runCommand(world as WorldName, command.op, command.args);
    const fastify = this.fastify;
    const r = command.args as ForwardedRequest;
    if (fastify === null || r?.svc?.world !== world) {
      throw new DomainError('INTERNAL', `Unknown forwarded command ${command.op} for ${world}`);
    }
    const token = randomUUID();
    this.tokens.set(token, r.svc);
    try {
      const res = await fastify.inject({
        method: r.method as 'GET',
        url: r.url,
        headers: { ...r.headers, [FORWARDED_HEADER]: token, 'x-request-id': r.requestId },
        ...(r.body === null ? {} : { payload: r.body }),
      });
      const headers: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(res.headers)) {
        if (value !== undefined) headers[name] = Array.isArray(value) ? value : String(value);
      }
      const answer: ForwardedAnswer = { status: res.statusCode, headers, body: res.payload };
      if (isWorldId(world)) answer.clockOffsetMs = this.clocks.offsetOrZero(world);
      return answer;
    } finally {
      this.tokens.delete(token);
    }
  }

  /**
   * Resigns the writer terms (ends the lock session: another instance takes the worlds over at
   * its next round) in the shutdown's third step: after the HTTP drain (app.factory.ts: the
   * requests in flight are answered, their orders committed under this writer's epoch) and the
   * destroy hooks (the engines' and other timers stopped, so none commits as a deposed writer),
   * and before the application-shutdown hooks close Redis and the databases this stop still uses.
   * Stepping down earlier, in onModuleDestroy, fenced an order in flight off with 503
   * WRITER_UNAVAILABLE.
   */
  async beforeApplicationShutdown(): Promise<void> {
    const node = this.node;
    this.node = null;
    await node?.stop();
  }
}
