import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import proxyaddr from '@fastify/proxy-addr';
import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { Subscription } from 'rxjs';
import type { RawData, WebSocket } from 'ws';
import { Clock } from '../../common/clock/clock.js';
import { DomainError } from '../../common/errors/domain-error.js';
import { isWorldId, type WorldName } from '../../common/environment.js';
import type { Credential } from '../../common/http/request-context.js';
import { ConfigService } from '../../config/config.service.js';
import { AccessPipeline } from '../access/access.pipeline.js';
import { ApiKeyRepository } from '../api-keys/api-key.repository.js';
import { ClusterSignals } from '../redis/cluster-signals.js';
import { keysNow } from './key-recheck.js';
import {
  NotificationsService,
  type CreatedNotification,
} from '../notifications/notifications.service.js';
import { EngineRegistry } from '../trading/engine-registry.js';
import { EventBus, type CommittedEvents } from '../trading/event-bus.js';
import { CancelOnDisconnectService } from './cancel-on-disconnect.service.js';
import { CryptoService, type CryptoPriceMoved } from '../crypto/crypto.service.js';
import { RfqNotices, type RfqChannelMessage } from '../rfq/rfq-notices.service.js';
import { isCryptoSymbol } from '../crypto/crypto-symbols.js';
import {
  CHANNEL_PATTERNS,
  parseChannel,
  PRIVATE_CHANNELS,
  PRIVATE_SCOPE,
  route,
  tickerData,
} from './channels.js';
import { MessageBudget } from './message-budget.js';
import { Coalescer } from './coalescer.js';
import { Connection, EventMessage, Feed, sendToFeed, type FeedSubscription } from './connection.js';
import { toWsError, WS_CLOSE } from './ws-errors.js';

/**
 * The realtime feed: first-message auth, subscriptions, and fan-out of committed engine events.
 * Public channels are per environment (a test key sees only the paper engine); private channels
 * are per environment and user. Each channel is a {@link Feed}: a message is serialised once for
 * it, numbered with one counter for all its subscribers, and only the per-connection seq is
 * spliced in (one frame per distinct seq).
 */
/** Bytes of received messages a connection may have waiting to be handled (see accept). */
export const MAX_WAITING_BYTES = 1_048_576;

function byteLength(data: RawData): number {
  return Array.isArray(data) ? data.reduce((n, b) => n + b.length, 0) : data.byteLength;
}

@Injectable()
export class RealtimeHub implements OnModuleInit, OnModuleDestroy {
  private readonly log = new Logger('Realtime');
  private readonly connections = new Set<Connection>();
  private readonly perIp = new Map<string, number>();
  /** `${env}|${channel}` -> the feed of a public channel (while it has subscribers). */
  private readonly publicFeeds = new Map<string, Feed>();
  /** `${env}|${userId}|${channel}` -> the feed of a user's private channel (same). */
  private readonly privateFeeds = new Map<string, Feed>();
  private busSub: Subscription | null = null;
  private cryptoSub: Subscription | null = null;
  private keySubs: (() => void)[] = [];
  private notificationSub: Subscription | null = null;
  private rfqSub: Subscription | null = null;
  private expiry: NodeJS.Timeout | null = null;
  private recheck: NodeJS.Timeout | null = null;
  /** When (service clock) each key session authenticated: a rotation after it ends it. */
  private readonly authedAt = new WeakMap<Connection, number>();
  private heartbeat: NodeJS.Timeout | null = null;
  /** Which peers may name the client in X-Forwarded-For: TRUSTED_PROXIES, as for HTTP. */
  private trustProxy: ((addr: string, i: number) => boolean) | null = null;
  /** Engine-event frames per connection: at most one write per WS_COALESCE_MS. */
  private readonly coalescer: Coalescer;

  constructor(
    private readonly access: AccessPipeline,
    private readonly engines: EngineRegistry,
    private readonly bus: EventBus,
    private readonly config: ConfigService,
    private readonly cod: CancelOnDisconnectService,
    private readonly signals: ClusterSignals,
    private readonly keys: ApiKeyRepository,
    private readonly clock: Clock,
    private readonly notifications: NotificationsService,
    private readonly crypto: CryptoService,
    private readonly rfq: RfqNotices,
  ) {
    this.coalescer = new Coalescer(config.values.wsCoalesceMs);
  }

  onModuleInit(): void {
    const proxies = this.config.values.trustedProxies;
    this.trustProxy = proxies.length > 0 ? proxyaddr.compile(proxies) : null;
    // A failure while fanning out must not escape into the event bus (RxJS would rethrow it
    // asynchronously and stop the process): the commit already happened; log and go on.
    this.busSub = this.bus.stream.subscribe((batch) => {
      try {
        this.fanOut(batch);
      } catch (err) {
        this.log.error(
          `realtime fan-out failed: ${err instanceof Error ? err.stack : String(err)}`,
        );
      }
    });
    // Each move of a world's crypto index reaches that world's crypto:<symbol> subscribers.
    this.cryptoSub = this.crypto.moved.subscribe((moved) => {
      try {
        this.deliverCrypto(moved);
      } catch (err) {
        this.log.error(`realtime crypto price failed: ${String(err)}`);
      }
    });
    // Each RFQ message reaches the connections of the users it names, in its world only.
    this.rfqSub = this.rfq.messages.subscribe((m) => {
      try {
        this.deliverRfq(m);
      } catch (err) {
        this.log.error(`realtime rfq message failed: ${String(err)}`);
      }
    });
    // Each notification reaches its owner's connections of its world only, once it is stored.
    this.notificationSub = this.notifications.created.subscribe((created) => {
      try {
        this.deliverNotification(created);
      } catch (err) {
        this.log.error(`realtime notification failed: ${String(err)}`);
      }
    });
    this.heartbeat = setInterval(() => this.beat(), this.config.values.wsHeartbeatMs);
    this.heartbeat.unref();
    // A revoked or rotated key ends its sessions at once, like its HTTP requests, on every
    // instance (ClusterSignals); a rotated one says so, so a client can tell "reconnect with the
    // new secret" from "stop".
    this.keySubs = [
      this.signals.on('key.revoked', ({ keyId }) =>
        this.endKeySessions((c) => c.keyId === keyId, 'API_KEY_REVOKED', REVOKED_MESSAGE),
      ),
      this.signals.on('key.rotated', ({ keyId }) =>
        this.endKeySessions((c) => c.keyId === keyId, 'API_KEY_ROTATED', ROTATED_MESSAGE),
      ),
    ];
    // With other instances, a withdrawal signal missed while Redis was away is caught by reading
    // the keys of open sessions again every CLUSTER_CACHE_TTL_MS.
    const ttl = this.signals.cacheTtlMs;
    if (ttl !== null) {
      this.recheck = setInterval(() => void this.recheckKeys(), ttl);
      this.recheck.unref();
    }
    // Keys and session tokens that expire while connected are cut within a second (service
    // clock), as their next HTTP request would be refused.
    this.expiry = setInterval(() => {
      const now = this.clock.now();
      const expired = (c: Credential) => c.expiresAt != null && c.expiresAt <= now;
      this.endKeySessions(
        (c) => c.type === 'API_KEY' && expired(c),
        'API_KEY_EXPIRED',
        'The API key expired',
      );
      this.endKeySessions(
        (c) => c.type === 'SESSION' && expired(c),
        'UNAUTHENTICATED',
        'The session token expired',
      );
    }, 1000);
    this.expiry.unref();
  }

  private endKeySessions(
    match: (c: Credential, conn: Connection) => boolean,
    code: 'API_KEY_REVOKED' | 'API_KEY_ROTATED' | 'API_KEY_EXPIRED' | 'UNAUTHENTICATED',
    message: string,
  ): void {
    for (const conn of this.connections) {
      if (conn.credential === null || !match(conn.credential, conn)) continue;
      conn.sendJson({ type: 'error', code, message });
      conn.close(WS_CLOSE.UNAUTHENTICATED, code);
      this.drop(conn);
    }
  }

  /** Ends the sessions of keys revoked, or rotated since they authenticated, per the database. */
  async recheckKeys(): Promise<void> {
    const ids = new Set<string>();
    for (const c of this.connections) if (c.credential?.keyId != null) ids.add(c.credential.keyId);
    if (ids.size === 0) return;
    let now: Map<string, { revoked: boolean; rotatedAt: number | null }>;
    try {
      now = await keysNow(this.keys.repo, [...ids]);
    } catch (err) {
      this.log.warn(`re-reading the keys of realtime sessions failed: ${String(err)}`);
      return;
    }
    const state = (c: Credential) => (c.keyId === null ? undefined : now.get(c.keyId));
    this.endKeySessions((c) => state(c)?.revoked === true, 'API_KEY_REVOKED', REVOKED_MESSAGE);
    this.endKeySessions(
      (c, conn) => {
        const at = state(c)?.rotatedAt;
        return at != null && at > (this.authedAt.get(conn) ?? Infinity);
      },
      'API_KEY_ROTATED',
      ROTATED_MESSAGE,
    );
  }

  /**
   * Closes every connection authenticated with `keyId` with 1012 (service restart), as a server
   * going away would: the client may reconnect at once. Answers how many were closed.
   */
  restartKeySessions(keyId: string, reason: string): number {
    let closed = 0;
    for (const conn of this.connections) {
      if (conn.credential?.keyId !== keyId) continue;
      conn.close(WS_CLOSE.SERVICE_RESTART, reason);
      this.drop(conn);
      closed++;
    }
    return closed;
  }

  onModuleDestroy(): void {
    this.cod.shuttingDown(); // before the closes below: another instance arms their keys
    this.busSub?.unsubscribe();
    this.cryptoSub?.unsubscribe();
    for (const off of this.keySubs) off();
    this.notificationSub?.unsubscribe();
    this.rfqSub?.unsubscribe();
    if (this.heartbeat !== null) clearInterval(this.heartbeat);
    if (this.expiry !== null) clearInterval(this.expiry);
    if (this.recheck !== null) clearInterval(this.recheck);
    for (const c of this.connections) c.close(1001, 'server shutting down');
  }

  accept(socket: WebSocket, req: IncomingMessage): void {
    const v = this.config.values;
    // The client's address as the HTTP routes see it (Fastify's trustProxy uses the same rule),
    // so a trusted proxy's clients each get their own per-IP connection allowance.
    const ip =
      this.trustProxy === null
        ? (req.socket.remoteAddress ?? 'unknown')
        : proxyaddr(req, this.trustProxy);
    const conn = new Connection(
      `ws_${randomBytes(9).toString('base64url')}`,
      socket,
      ip,
      v.wsMaxBufferedBytes,
      new MessageBudget(v.wsMessageRate, v.wsMessageBurst, this.clock.now()),
    );
    conn.onServerClose = () => this.release(conn);
    const count = (this.perIp.get(ip) ?? 0) + 1;
    if (count > v.wsMaxConnectionsPerIp) {
      conn.sendJson({
        type: 'error',
        code: 'CONNECTION_LIMIT',
        message: `At most ${v.wsMaxConnectionsPerIp} connections per IP`,
      });
      conn.close(WS_CLOSE.CONNECTION_LIMIT, 'too many connections from this IP');
      return;
    }
    this.perIp.set(ip, count);
    this.connections.add(conn);
    conn.authTimer = setTimeout(() => {
      if (conn.credential === null) {
        conn.sendJson({
          type: 'error',
          code: 'UNAUTHENTICATED',
          message: `No auth message within ${v.wsAuthTimeoutMs} ms`,
        });
        conn.close(WS_CLOSE.UNAUTHENTICATED, 'auth timeout');
      }
    }, v.wsAuthTimeoutMs);
    // One message at a time per connection: auth is asynchronous, and a client may send
    // `subscribe` right behind `auth` without waiting for auth_ok.
    socket.on('message', (data: RawData) => {
      if (!this.admit(conn)) return;
      // What waits to be handled (behind a pending auth) is bounded in bytes too: the budget
      // lets a burst of messages through, and each may be up to 64 KiB.
      const size = byteLength(data);
      if (!conn.wait(size, MAX_WAITING_BYTES)) {
        conn.sendJson({
          type: 'error',
          code: 'RATE_LIMITED',
          message: `More than ${MAX_WAITING_BYTES} bytes of messages waiting to be handled: connection closed`,
        });
        conn.close(WS_CLOSE.RATE_LIMITED, 'too much waiting to be handled');
        return;
      }
      conn.inbox = conn.inbox
        .then(() => {
          conn.handled(size);
          return conn.closed ? undefined : this.onMessage(conn, data);
        })
        .catch(() => undefined);
    });
    socket.on('pong', () => {
      conn.alive = true;
    });
    // Protocol-level pings get their pong here, within the send-buffer bound (ws's own automatic
    // pong would queue without limit for a client that floods pings and never reads).
    socket.on('ping', (data: Buffer) => {
      if (this.admit(conn)) conn.pong(data);
    });
    socket.on('close', () => this.drop(conn));
    socket.on('error', () => this.drop(conn));
  }

  /**
   * Charges one incoming message (or protocol ping) to the connection's budget (a subscribe pays
   * for its other channels once it is handled). A refused one is not handled; the first of a run
   * is answered RATE_LIMITED in its turn (after the answers to the messages before it), and a
   * client that keeps sending far past its budget is closed 4429, also in its turn.
   */
  private admit(conn: Connection): boolean {
    if (conn.closed) return false;
    const budget = conn.budget;
    const verdict = budget.take(this.clock.now());
    if (verdict === 'ok') return true;
    if (verdict === 'refuse') {
      const error = {
        type: 'error',
        code: 'RATE_LIMITED',
        message:
          `More than ${budget.rate} messages a second (burst ${budget.burst}): this message ` +
          'was not handled, nor will later ones be until the budget refills',
        details: {
          retry_after_ms: budget.retryAfterMs(),
          limit_per_second: budget.rate,
          burst: budget.burst,
        },
      };
      conn.inbox = conn.inbox.then(() => conn.sendJson(error)).catch(() => undefined);
    } else if (verdict === 'close') {
      // In its turn too: the answers to the messages let through before it (at most a burst of
      // them) go first; from now on the budget refuses everything quietly.
      const last = {
        type: 'error',
        code: 'RATE_LIMITED',
        message: 'Kept sending far past the message budget: connection closed',
        details: { limit_per_second: budget.rate, burst: budget.burst },
      };
      conn.inbox = conn.inbox
        .then(() => {
          conn.sendJson(last);
          conn.close(WS_CLOSE.RATE_LIMITED, 'message rate limit');
        })
        .catch(() => undefined);
    }
    return false;
  }

  private async onMessage(conn: Connection, data: RawData): Promise<void> {
    let msg: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(data.toString());
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
        throw new Error('not an object');
      msg = parsed as Record<string, unknown>;
    } catch {
      this.fail(
        conn,
        new DomainError('BAD_MESSAGE', 'Messages are JSON objects with a "type"'),
        conn.credential === null,
      );
      return;
    }
    try {
      if (conn.credential === null) {
        await this.authenticate(conn, msg);
        return;
      }
      switch (msg.type) {
        case 'subscribe':
          this.subscribe(conn, msg.channels);
          return;
        case 'unsubscribe':
          this.unsubscribe(conn, msg.channels);
          return;
        case 'ping':
          conn.sendJson({ type: 'pong' });
          return;
        case 'auth':
          throw new DomainError('BAD_MESSAGE', 'Already authenticated');
        default:
          throw new DomainError(
            'BAD_MESSAGE',
            `Unknown message type ${JSON.stringify(msg.type)}; use subscribe, unsubscribe or ping`,
          );
      }
    } catch (err) {
      // After auth, errors are messages: the connection stays open.
      this.fail(conn, err, false);
    }
  }

  private async authenticate(conn: Connection, msg: Record<string, unknown>): Promise<void> {
    if (msg.type !== 'auth') {
      this.fail(
        conn,
        new DomainError('UNAUTHENTICATED', 'The first message must be {"type":"auth", ...}'),
        true,
      );
      return;
    }
    try {
      const credential = await this.access.authenticateRealtime(msg);
      if (conn.closed) return;
      conn.credential = credential;
      this.authedAt.set(conn, this.clock.now());
      if (conn.authTimer !== null) clearTimeout(conn.authTimer);
      // Its world's batches committed on other instances reach this one too (REDIS_URL).
      conn.unfollow = this.bus.follow(credential.world);
      this.cod.connected(credential);
      conn.sendJson({
        type: 'auth_ok',
        environment: credential.environment,
        scopes: credential.scopes,
        key_id: credential.keyId,
      });
    } catch (err) {
      this.fail(conn, err, true);
    }
  }

  private subscribe(conn: Connection, channels: unknown): void {
    const list = this.channelList(channels);
    const c = conn.credential!;
    // Channels are per world: a world key's connection hears its world only.
    const env = c.world;
    // Validate the whole request first: a bad channel subscribes nothing.
    const parsed = list.map((name) => {
      const p = parseChannel(name);
      if (p === null) {
        throw new DomainError('UNKNOWN_CHANNEL', `Unknown channel ${JSON.stringify(name)}`, {
          channel: name,
          channels: CHANNEL_PATTERNS,
        });
      }
      // The market channels (ticker, orderbook, trades) need only the websocket scope: they were
      // published so, and asking for markets:read now would break the keys created for them
      // (a breaking change needs an approval and a migration window, SPEC Versioning 3).
      const needs = p.kind === 'private' ? PRIVATE_SCOPE[p.name] : [];
      if (needs.length > 0 && !needs.some((s) => c.scopes.includes(s as never))) {
        throw new DomainError(
          'INSUFFICIENT_SCOPE',
          `Channel ${name as string} needs the ${needs.join(' or ')} scope`,
          { required_scopes: [...needs] },
        );
      }
      if (p.kind === 'crypto' && !isCryptoSymbol(p.symbol)) {
        throw new DomainError('UNKNOWN_CHANNEL', `No crypto index ${p.symbol}`, { channel: name });
      }
      if (
        (p.kind === 'orderbook' || p.kind === 'trades') &&
        this.engines.reads(env).marketSummary(p.marketId) === undefined
      ) {
        throw new DomainError('UNKNOWN_CHANNEL', `No market ${p.marketId}`, { channel: name });
      }
      return [name, p] as const;
    });
    const fresh = parsed.filter(([name]) => !conn.subscriptions.has(name)).length;
    if (conn.subscriptions.size + fresh > this.config.values.wsMaxSubscriptions) {
      throw new DomainError(
        'SUBSCRIPTION_LIMIT',
        `At most ${this.config.values.wsMaxSubscriptions} channels per connection`,
        {
          limit: this.config.values.wsMaxSubscriptions,
        },
      );
    }
    // A unit per channel (a snapshot each, for orderbooks): the message paid the first on arrival;
    // the rest now, or nothing is subscribed.
    const budget = conn.budget;
    const extra = parsed.length - 1;
    if (!budget.spend(extra, this.clock.now())) {
      const details = { limit_per_second: budget.rate, burst: budget.burst, units: parsed.length };
      if (parsed.length > budget.burst) {
        // It can never pass as it is: no time to wait for.
        throw new DomainError(
          'RATE_LIMITED',
          `A subscribe costs a unit per channel: ${parsed.length} channels exceed the burst of ${budget.burst}; subscribe them in smaller sets`,
          details,
        );
      }
      throw new DomainError(
        'RATE_LIMITED',
        `A subscribe costs a unit per channel: ${parsed.length} channels are more than the budget has left; nothing was subscribed`,
        // When sending it again would be covered: its arrival unit and the rest.
        { retry_after_ms: budget.retryAfterMs(parsed.length), ...details },
      );
    }
    // A snapshot shows committed state only: orders of this event-loop turn still waiting for
    // their group commit are committed (and fanned out, before this connection joins) first.
    if (parsed.some(([, p]) => p.kind === 'orderbook')) this.engines.committedReads(env);
    for (const [name] of parsed) {
      // Re-subscribing restarts the channel: a fresh snapshot with seq 1.
      const existing = conn.subscriptions.get(name);
      if (existing !== undefined) existing.restart();
      else conn.subscriptions.set(name, this.feed(env, c.userId, name).join(conn));
    }
    conn.sendJson({ type: 'subscribed', channels: list });
    for (const [name, p] of parsed) {
      if (p.kind !== 'orderbook') continue;
      conn.sendEvent(name, this.snapshotMessage(env, name, p.marketId));
    }
  }

  private snapshotMessage(env: WorldName, channel: string, marketId: string): EventMessage {
    const depth = this.engines.reads(env).depth(marketId, 99);
    return new EventMessage(
      channel,
      this.engines.clockOf(env).now(),
      { kind: 'snapshot', bids: depth?.bids ?? [], asks: depth?.asks ?? [] },
      isWorldId(env) ? env : null,
    );
  }

  /**
   * After an engine rebuild no event describes how the books changed, so every orderbook
   * subscriber of that environment gets a fresh snapshot, and every ticker subscriber each
   * market's ticker (seq keeps rising).
   */
  private resnapshot(env: WorldName): void {
    for (const [key, feed] of this.publicFeeds) {
      const channel = feed.channel;
      if (!key.startsWith(`${env}|orderbook:`)) continue;
      const message = this.snapshotMessage(env, channel, channel.slice('orderbook:'.length));
      sendToFeed(feed, message);
    }
    const tickers = this.publicFeeds.get(`${env}|ticker`);
    if (tickers === undefined) return;
    const engine = this.engines.reads(env);
    for (const marketId of engine.marketIds()) {
      const message = new EventMessage(
        'ticker',
        this.clock.now(),
        tickerData(engine, marketId),
        isWorldId(env) ? env : null,
      );
      sendToFeed(tickers, message);
    }
  }

  /**
   * Batches of the world were lost on the way here (a break in the stream shared between
   * instances): each engine channel with no fresh state to send (trades, and the private ones
   * but notifications and rfq, which do not come from engine batches) skips one seq, so its next
   * message shows the gap and the client resubscribes, as documented; orderbook and ticker
   * subscribers get fresh snapshots instead.
   */
  private skipLost(env: WorldName): void {
    for (const c of this.connections) {
      if (c.credential?.world !== env) continue;
      for (const [channel, sub] of c.subscriptions) {
        if (channel.startsWith('trades:') || LOSSY_PRIVATE.has(channel)) sub.skip();
      }
    }
  }

  private unsubscribe(conn: Connection, channels: unknown): void {
    const list = this.channelList(channels);
    const env = conn.credential!.world;
    for (const name of list) {
      const sub = conn.subscriptions.get(name);
      if (sub === undefined) continue;
      conn.subscriptions.delete(name);
      this.leave(env, sub);
    }
    conn.sendJson({ type: 'unsubscribed', channels: list });
  }

  private channelList(channels: unknown): string[] {
    if (
      !Array.isArray(channels) ||
      channels.length === 0 ||
      channels.some((c) => typeof c !== 'string')
    ) {
      throw new DomainError('BAD_MESSAGE', '"channels" must be a non-empty array of channel names');
    }
    return [...new Set(channels as string[])];
  }

  /** Committed events -> channel messages -> subscribers. */
  private fanOut(batch: CommittedEvents): void {
    if (this.connections.size === 0) return;
    const env = batch.world;
    const engine = this.engines.reads(env);
    const worldId = isWorldId(env) ? env : null;
    if (batch.rebuilt === true) {
      // The writer's book sent for other instances' followers: nothing changed here.
      if (batch.remote !== true && batch.follow?.book !== undefined) return;
      // The shared stream's reader started reading the world (its first realtime connection
      // here): nothing was lost, and where this instance writes the world its engine, which every
      // snapshot reads, has every batch already. Only a follower view, which missed the
      // batches before the reader was positioned, is rebuilt and resent; a snapshot here would
      // repeat the subscribers' books mid-stream for nothing.
      if (batch.remote === true && batch.lost !== true && this.engines.writes(env)) return;
      if (batch.lost === true) this.skipLost(env);
      this.resnapshot(env);
      return;
    }
    const outs = route(batch.events, engine, batch.environment);
    // Every connection's messages of this batch, and of the others within the coalescing
    // window, leave in one write.
    const writes = this.coalescer.batch();
    try {
      for (const out of outs) {
        // The channel's subscribers only: a user's connections that did not subscribe to one of
        // its private channels are not visited.
        const feed =
          out.scope === 'public'
            ? this.publicFeeds.get(`${env}|${out.channel}`)
            : this.privateFeeds.get(privateKey(env, out.userId, out.channel));
        if (feed === undefined) continue;
        const message = new EventMessage(out.channel, batch.committedAt, out.data, worldId);
        sendToFeed(feed, message, writes);
      }
    } finally {
      this.coalescer.release();
    }
  }

  /** A stored crypto index move -> the subscribers of crypto:<symbol> in its world. */
  private deliverCrypto({ world, price }: CryptoPriceMoved): void {
    const channel = `crypto:${price.symbol}`;
    const feed = this.publicFeeds.get(`${world}|${channel}`);
    if (feed === undefined) return;
    const message = new EventMessage(
      channel,
      Date.parse(price.as_of),
      price,
      isWorldId(world) ? world : null,
    );
    sendToFeed(feed, message);
  }

  /**
   * An RFQ message -> the named users' connections in its world that follow `rfq` (an ephemeral
   * world's message names it, `world_id`).
   */
  private deliverRfq({ environment, userIds, event, at, data }: RfqChannelMessage): void {
    const worldId = isWorldId(environment) ? environment : null;
    let message: EventMessage | null = null;
    for (const userId of userIds) {
      const feed = this.privateFeeds.get(privateKey(environment, userId, 'rfq'));
      if (feed === undefined) continue;
      message ??= new EventMessage('rfq', at, { event, ...data }, worldId);
      sendToFeed(feed, message);
    }
  }

  /** A stored notification -> its owner's connections in its world that follow `notifications`. */
  private deliverNotification({ userId, environment, notification }: CreatedNotification): void {
    const feed = this.privateFeeds.get(privateKey(environment, userId, 'notifications'));
    if (feed === undefined) return;
    const message = new EventMessage(
      'notifications',
      Date.parse(notification.created_at),
      notification,
    );
    sendToFeed(feed, message);
  }

  /**
   * Sends the error message. Before auth (`authPhase`) it also closes: 4403 for a forbidden
   * credential, 1011 for an unexpected server error (the client may retry), else 4401. After
   * auth an error never closes the connection.
   */
  private fail(conn: Connection, err: unknown, authPhase: boolean): void {
    const { message, close, unexpected } = toWsError(err, conn.id);
    if (unexpected)
      this.log.error(
        `realtime error on ${conn.id}: ${err instanceof Error ? err.stack : String(err)}`,
      );
    conn.sendJson(message);
    if (authPhase) conn.close(close ?? WS_CLOSE.UNAUTHENTICATED, message.code);
  }

  /** The feed of `channel` (public, or the user's private one) in `env`, made on first use. */
  private feed(env: WorldName, userId: string, channel: string): Feed {
    const [feeds, key] = this.feedKey(env, userId, channel);
    let feed = feeds.get(key);
    if (feed === undefined) feeds.set(key, (feed = new Feed(channel)));
    return feed;
  }

  private feedKey(env: WorldName, userId: string, channel: string): [Map<string, Feed>, string] {
    return isPrivateChannel(channel)
      ? [this.privateFeeds, privateKey(env, userId, channel)]
      : [this.publicFeeds, `${env}|${channel}`];
  }

  /** Takes a subscription off its feed; a feed nobody follows is forgotten. */
  private leave(env: WorldName, sub: FeedSubscription): void {
    sub.leave();
    if (sub.feed.subscribers.size > 0) return;
    const [feeds, key] = this.feedKey(env, sub.conn.credential!.userId, sub.feed.channel);
    if (feeds.get(key) === sub.feed) feeds.delete(key);
  }

  /** How many public channels have subscribers (for tests and diagnostics). */
  get followedChannels(): number {
    return this.publicFeeds.size;
  }

  private drop(conn: Connection): void {
    if (!this.connections.delete(conn)) return;
    conn.closed = true;
    conn.unfollow?.();
    conn.unfollow = null;
    if (conn.authTimer !== null) clearTimeout(conn.authTimer);
    const n = (this.perIp.get(conn.ip) ?? 1) - 1;
    if (n <= 0) this.perIp.delete(conn.ip);
    else this.perIp.set(conn.ip, n);
    const c = conn.credential;
    if (c === null) return;
    for (const sub of conn.subscriptions.values()) this.leave(c.world, sub);
    this.release(conn);
  }

  /**
   * The connection no longer keeps its key's orders alive (cancel-on-disconnect), once: when the
   * server closes it (a slow consumer's socket may stay open until it reads again, or until the
   * heartbeat) or when the socket is gone, whichever comes first.
   */
  private release(conn: Connection): void {
    if (conn.released || conn.credential === null) return;
    conn.released = true;
    this.cod.disconnected(conn.credential);
  }

  /** Server heartbeat: a connection that did not answer the last ping is closed. */
  private beat(): void {
    for (const c of this.connections) {
      if (!c.alive) {
        c.close(WS_CLOSE.DEAD, 'no pong');
        c.socket.terminate();
        this.drop(c);
        continue;
      }
      c.alive = false;
      try {
        c.socket.ping();
      } catch {
        this.drop(c);
      }
    }
  }
}

const REVOKED_MESSAGE = 'The API key was revoked';
const ROTATED_MESSAGE = 'The API key was rotated: reconnect with its new secret';

/** Private channels fed by committed engine batches. */
const LOSSY_PRIVATE = new Set<string>(['orders', 'fills', 'positions', 'wallet']);

function privateKey(env: WorldName, userId: string, channel: string): string {
  return `${env}|${userId}|${channel}`;
}

function isPrivateChannel(channel: string): boolean {
  return (PRIVATE_CHANNELS as readonly string[]).includes(channel);
}
