/**
 * AsyncAPI 3.0 description of the realtime feed, so SDKs can generate stream clients too.
 * Served at /api/v1/asyncapi.json and linked from the OpenAPI document.
 */
import { NOTIFICATION_TYPES } from '../notifications/notifications.dto.js';
import { LEDGER_TYPES } from '../wallet/dto/wallet.dto.js';
import { CHANNEL_PATTERNS } from './channels.js';

const ref = (name: string) => ({ $ref: `#/components/messages/${name}` });
const obj = (properties: Record<string, unknown>, required: string[] = []) => ({
  type: 'object',
  properties,
  ...(required.length > 0 ? { required } : {}),
});
const int = { type: 'integer' };
const str = { type: 'string' };
const level = obj({ price: int, quantity: int }, ['price', 'quantity']);

/** `world_id` on the engine's channels: present only on messages of an ephemeral world. */
const WORLD_ID = {
  type: 'string',
  pattern: '^wld_',
  description:
    "Present only for messages of an ephemeral world (POST /api/v1/sandbox/worlds), which a connection authenticated with that world's key receives: the world id (wld_...). Absent on the live and shared paper worlds.",
};

/**
 * The channels served inside ephemeral worlds (the engine's, the world's crypto indices and rfq):
 * their messages there carry `world_id`. The others (notifications) do not.
 */
const WORLD_CHANNELS = new Set([
  'ticker',
  'orderbook:<market_id>',
  'trades:<market_id>',
  'orders',
  'fills',
  'positions',
  'wallet',
  'crypto:<symbol>',
  'rfq',
]);

function event(channel: string, data: Record<string, unknown>) {
  const inWorlds = WORLD_CHANNELS.has(channel);
  return {
    payload: obj(
      {
        type: { const: 'event' },
        ...(inWorlds ? { world_id: WORLD_ID } : {}),
        channel: { type: 'string', description: channel },
        seq: {
          type: 'integer',
          minimum: 1,
          description:
            "Rises by 1 per channel per connection; a gap means lost messages: resubscribe. A (re)subscribe starts the channel over at 1 (on orderbook channels, with the snapshot). The server leaves a gap on purpose when engine events of the world may not have reached this connection (with several instances on one Redis, a break in the event stream they share: Redis away, or this instance too far behind): the next message on trades, orders, fills, positions and wallet then skips one seq, while orderbook subscribers get a fresh snapshot (a snapshot replaces the book held) and ticker subscribers every market's ticker",
        },
        ts: {
          type: 'integer',
          description: 'Commit time of the events, epoch ms (the instant `time` gives)',
        },
        time: {
          type: 'string',
          format: 'date-time',
          description: 'Commit time of the events, ISO-8601 UTC with milliseconds',
        },
        data,
      },
      ['type', 'channel', 'seq', 'ts', 'time', 'data'],
    ),
  };
}

export function buildAsyncApi(serverUrl: string): Record<string, unknown> {
  const host = serverUrl.replace(/^https?:\/\//, '');
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Sandbox exchange realtime feed',
      version: 'v1',
      description:
        'One WebSocket at /api/v1/ws on the HTTP port. The first message authenticates ({"type":"auth","api_key":...} or {"type":"auth","token":...}, not both); keys need the websocket scope. The market channels (ticker, orderbook:<market_id>, trades:<market_id>) and the crypto index channels (crypto:<symbol>: BTC-USD, ETH-USD, SOL-USD; another symbol is UNKNOWN_CHANNEL) need no other scope; the private ones need the read scope of their area: orders and fills orders:read, positions and wallet wallet:read, notifications notifications:read, rfq orders:read or rfq:respond (else an INSUFFICIENT_SCOPE error naming required_scopes, and nothing is subscribed). A test key sees only the paper engine. The private notifications channel carries each in-app notification of the connection\'s user and world (a test key: the paper world; a live key or a session: the live world) as it is stored, as the object GET /api/v1/notifications/cursor lists (ts and time are its created_at). A signing-required key adds "timestamp" and "signature" (v1=<hex HMAC-SHA256 of "<timestamp>.GET./api/v1/ws.">). The handshake is an HTTP request like the others: past the per-IP ceiling (category general) it is answered 429 RATE_LIMITED with Retry-After, during a shutdown 503, before any upgrade. Close codes: 4401 bad or missing auth, no auth within 10 s, or a key revoked (API_KEY_REVOKED), rotated (API_KEY_ROTATED: reconnect with the new secret) or expired (API_KEY_EXPIRED), or a session token expired while connected (with several instances on one Redis, a revoke or rotation closes the key\'s connections on every instance, at once, or within 5 s if Redis was away); 4403 a forbidden credential (missing websocket scope, sandbox off); 4008 a client whose send buffer overflowed (slow consumer; the pongs to its own pings count too); 4429 too many connections from one IP (CONNECTION_LIMIT) or a client that kept sending far past its message budget or has over 1 MiB of messages waiting to be handled (RATE_LIMITED); 4000 missed heartbeats (no pong); 1009 a client message over 64 KiB; 1001 the server shutting down (reconnect); 1012 a sandbox DISCONNECT scenario fired for the key (a service restart as the client sees it: reconnect); 1011 an unexpected server error while authenticating (retry). Error message codes (an error answering a message after auth, such as a refused subscribe, leaves the connection open; the close codes above are the exceptions): UNAUTHENTICATED, INSUFFICIENT_SCOPE, API_KEY_REVOKED, API_KEY_ROTATED, API_KEY_EXPIRED, SANDBOX_DISABLED, signature codes as over HTTP, BAD_MESSAGE, UNKNOWN_CHANNEL, SUBSCRIPTION_LIMIT, CONNECTION_LIMIT, RATE_LIMITED, INTERNAL. Message budget per connection: WS_MESSAGE_BURST units at once (default 2 x WS_MAX_SUBSCRIPTIONS + 50, 250), WS_MESSAGE_RATE a second after that (default 20); a message or protocol ping costs one unit on arrival; a subscribe pays a unit per channel it names, the rest when it is handled, and one the budget cannot cover then is answered RATE_LIMITED (details units, and retry_after_ms unless it names more channels than the burst, which can never pass) and subscribes nothing; messages waiting to be handled (behind a pending auth) may hold at most 1 MiB, else RATE_LIMITED and close 4429. A message past it is not handled (a refused protocol ping gets no pong); the first of a run is answered RATE_LIMITED with details {retry_after_ms, limit_per_second, burst} in its turn, later ones get nothing until one is handled again; refusals are forgiven at the same rate, and more than a burst of them unforgiven ends the connection with a last RATE_LIMITED error and close 4429. Delivery of engine events (ticker, orderbook, trades, orders, fills, positions, wallet) may be coalesced: with WS_COALESCE_MS set (1 to 5 ms; default 0, off: a write per committed batch) an event committed within WS_COALESCE_MS of the end of the previous write is held for WS_COALESCE_MS (no longer), with the events committed meanwhile, and a connection\'s waiting messages then leave together in one socket write (each still its own WebSocket message with its own seq; ts and time stay the commit time). An event after a quiet spell (no write for WS_COALESCE_MS) leaves at once. Order on a connection is kept: waiting messages go out before any later message to it (an answer, a snapshot, an error or a close).',
    },
    defaultContentType: 'application/json',
    servers: { staging: { host, protocol: 'wss', pathname: '/api/v1/ws', description: 'Staging' } },
    channels: {
      feed: {
        address: '/api/v1/ws',
        messages: {
          auth: ref('auth'),
          authOk: ref('authOk'),
          subscribe: ref('subscribe'),
          subscribed: ref('subscribed'),
          unsubscribe: ref('unsubscribe'),
          unsubscribed: ref('unsubscribed'),
          ping: ref('ping'),
          pong: ref('pong'),
          error: ref('error'),
          ticker: ref('ticker'),
          orderbook: ref('orderbook'),
          trades: ref('trades'),
          crypto: ref('crypto'),
          orders: ref('orders'),
          fills: ref('fills'),
          positions: ref('positions'),
          wallet: ref('wallet'),
          notifications: ref('notifications'),
          rfq: ref('rfq'),
        },
      },
    },
    operations: {
      authenticate: {
        action: 'receive',
        channel: { $ref: '#/channels/feed' },
        messages: [{ $ref: '#/channels/feed/messages/auth' }],
      },
      subscribe: {
        action: 'receive',
        channel: { $ref: '#/channels/feed' },
        messages: [
          { $ref: '#/channels/feed/messages/subscribe' },
          { $ref: '#/channels/feed/messages/unsubscribe' },
          { $ref: '#/channels/feed/messages/ping' },
        ],
      },
      publish: {
        action: 'send',
        channel: { $ref: '#/channels/feed' },
        messages: [
          'authOk',
          'subscribed',
          'unsubscribed',
          'pong',
          'error',
          'ticker',
          'orderbook',
          'trades',
          'crypto',
          'orders',
          'fills',
          'positions',
          'wallet',
          'notifications',
          'rfq',
        ].map((m) => ({ $ref: `#/channels/feed/messages/${m}` })),
      },
    },
    components: {
      messages: {
        auth: {
          payload: obj(
            { type: { const: 'auth' }, api_key: str, token: str, timestamp: str, signature: str },
            ['type'],
          ),
        },
        authOk: {
          payload: obj(
            {
              type: { const: 'auth_ok' },
              environment: { enum: ['live', 'test'] },
              scopes: { type: 'array', items: str },
              key_id: { type: ['string', 'null'] },
            },
            ['type', 'environment', 'scopes'],
          ),
        },
        subscribe: {
          payload: obj(
            {
              type: { const: 'subscribe' },
              channels: {
                type: 'array',
                items: str,
                description: CHANNEL_PATTERNS.join(', '),
              },
            },
            ['type', 'channels'],
          ),
        },
        subscribed: {
          payload: obj({ type: { const: 'subscribed' }, channels: { type: 'array', items: str } }),
        },
        unsubscribe: {
          payload: obj(
            { type: { const: 'unsubscribe' }, channels: { type: 'array', items: str } },
            ['type', 'channels'],
          ),
        },
        unsubscribed: {
          payload: obj({
            type: { const: 'unsubscribed' },
            channels: { type: 'array', items: str },
          }),
        },
        ping: { payload: obj({ type: { const: 'ping' } }, ['type']) },
        pong: { payload: obj({ type: { const: 'pong' } }, ['type']) },
        error: {
          payload: obj(
            { type: { const: 'error' }, code: str, message: str, details: { type: 'object' } },
            ['type', 'code', 'message'],
          ),
        },
        ticker: event(
          'ticker',
          obj(
            {
              market_id: str,
              status: str,
              best_bid: { type: ['integer', 'null'] },
              best_ask: { type: ['integer', 'null'] },
              last_price: { type: ['integer', 'null'] },
              volume: int,
            },
            ['market_id', 'status', 'best_bid', 'best_ask', 'last_price', 'volume'],
          ),
        ),
        orderbook: event('orderbook:<market_id>', {
          oneOf: [
            obj(
              {
                kind: { const: 'snapshot' },
                bids: { type: 'array', items: level },
                asks: { type: 'array', items: level },
              },
              ['kind', 'bids', 'asks'],
            ),
            obj(
              {
                kind: { const: 'delta' },
                side: { enum: ['bids', 'asks'] },
                price: int,
                quantity: { type: 'integer', description: 'New total at the level; 0 removes it' },
              },
              ['kind', 'side', 'price', 'quantity'],
            ),
          ],
        }),
        trades: event(
          'trades:<market_id>',
          obj(
            {
              id: str,
              market_id: str,
              price: {
                type: 'integer',
                description: 'Trade price, YES cents (the resting order price)',
              },
              no_price: { type: 'integer', description: '100 - price: the same trade in NO cents' },
              quantity: int,
              taker_side: {
                enum: ['YES', 'NO'],
                description:
                  'What the taker bought: YES for a bid-side taker (BUY YES / SELL NO), NO for an ask-side taker (SELL YES / BUY NO); the same object as GET /markets/{id}/trades returns',
              },
              source: {
                enum: ['BOOK', 'RFQ'],
                description:
                  'BOOK: matched on the order book; RFQ: an accepted quote, traded off the book (the requester is the taker)',
              },
              created_at: str,
            },
            [
              'id',
              'market_id',
              'price',
              'no_price',
              'quantity',
              'taker_side',
              'source',
              'created_at',
            ],
          ),
        ),
        crypto: event(
          'crypto:<symbol>',
          obj(
            {
              symbol: { enum: ['BTC-USD', 'ETH-USD', 'SOL-USD'] },
              price: {
                type: 'string',
                pattern: '^\\d+\\.\\d{2}$',
                description: 'Index price in USD, 2 decimals',
              },
              as_of: {
                type: 'string',
                format: 'date-time',
                description:
                  "Service clock time the price was set (a walk step or a sandbox set): the same object as GET /crypto/prices lists. One message per step of the connection's world's walk (a catch-up of several steps, after a clock jump or an ephemeral world's clock advance, sends the last), per sandbox set of that world, and per sandbox reset of an ephemeral world (its seeded prices again); ts and time are as_of. An ephemeral world's key hears that world's index only",
              },
            },
            ['symbol', 'price', 'as_of'],
          ),
        ),
        orders: event('orders', {
          oneOf: [
            obj(
              {
                event: {
                  enum: [
                    'order.accepted',
                    'order.updated',
                    'order.cancelled',
                    'order.expired',
                    'order.amended',
                  ],
                },
                order_id: str,
                status: str,
                cancel_reason: {
                  type: ['string', 'null'],
                  description:
                    'order.cancelled and order.expired: why (SELF_TRADE_PREVENTION: it met an order of its own account)',
                },
                self_trade_prevention: {
                  enum: ['CANCEL_TAKER', 'CANCEL_MAKER', 'CANCEL_BOTH'],
                  description:
                    'order.accepted: the self-trade prevention mode the order was placed with',
                },
              },
              ['event', 'order_id'],
            ),
            obj(
              {
                event: {
                  const: 'account.reset',
                  description:
                    'a sandbox reset cancelled every open order at once (cancelled_orders says how many; no event per order follows)',
                },
                cancelled_orders: int,
              },
              ['event', 'cancelled_orders'],
            ),
          ],
        }),
        fills: event(
          'fills',
          obj(
            {
              id: str,
              order_id: str,
              market_id: str,
              side: str,
              price: int,
              yes_price: int,
              quantity: int,
              liquidity: { enum: ['MAKER', 'TAKER'] },
              created_at: str,
            },
            [
              'id',
              'order_id',
              'market_id',
              'side',
              'price',
              'yes_price',
              'quantity',
              'liquidity',
              'created_at',
            ],
          ),
        ),
        positions: event(
          'positions',
          obj(
            {
              market_id: str,
              side: {
                type: ['string', 'null'],
                enum: ['YES', 'NO', null],
                description: 'As GET /positions/cursor: the side held, null when flat',
              },
              quantity: { ...int, description: 'Contracts held on side (0 when flat)' },
              average_price: {
                type: ['number', 'null'],
                description:
                  "cost_basis_cents / quantity, in the held side's cents; null when flat",
              },
              cost_basis_cents: int,
              unrealized_pnl_cents: {
                type: ['integer', 'null'],
                description: 'Marked at mark_price; null without one',
              },
              mark_price: {
                type: ['number', 'null'],
                description: 'YES cents: the mid of best bid and ask, else the last trade price',
              },
              yes: { ...int, description: 'YES contracts held (kept beside side and quantity)' },
              no: { ...int, description: 'NO contracts held' },
              yes_cost_cents: int,
              no_cost_cents: int,
              realized_pnl_cents: int,
              settled: obj({ outcome: { enum: ['YES', 'NO'] }, payout_cents: int }, [
                'outcome',
                'payout_cents',
              ]),
            },
            [
              'market_id',
              'side',
              'quantity',
              'average_price',
              'cost_basis_cents',
              'realized_pnl_cents',
              'unrealized_pnl_cents',
              'mark_price',
              'yes',
              'no',
              'yes_cost_cents',
              'no_cost_cents',
            ],
          ),
        ),
        wallet: event(
          'wallet',
          obj(
            {
              balance_cents: int,
              delta_cents: int,
              // The ledger's own types: paper money added (starting balance, sandbox funding) is
              // FUNDING; DEPOSIT and WITHDRAWAL are real money on the live engine. RESERVATION
              // writes no ledger row: an order rested, was amended or cancelled, and only the
              // reserved (and so available) amount moved (delta_cents 0).
              reason: { enum: [...LEDGER_TYPES, 'RESERVATION'] },
              reserved_cents: {
                type: ['integer', 'null'],
                description:
                  "Reserved for resting orders once the command's events are all applied, on the account's last wallet message of the batch; null on its earlier messages (one per ledger row on the way: reservations are settled at the end of a command)",
              },
              available_cents: {
                type: ['integer', 'null'],
                description: 'balance_cents - reserved_cents, with reserved_cents (null with it)',
              },
            },
            ['balance_cents', 'delta_cents', 'reason', 'reserved_cents', 'available_cents'],
          ),
        ),
        notifications: event(
          'notifications',
          obj(
            {
              id: str,
              type: {
                type: 'string',
                description: `UPPER_SNAKE; today ${NOTIFICATION_TYPES.join(', ')} (more may come)`,
              },
              title: str,
              body: str,
              data: {
                type: 'object',
                description: 'By type, as GET /api/v1/notifications/cursor shows it',
              },
              environment: { enum: ['live', 'test'] },
              created_at: { type: 'string', format: 'date-time' },
              read_at: { type: 'null', description: 'Always null: it was just created' },
            },
            ['id', 'type', 'title', 'body', 'data', 'environment', 'created_at', 'read_at'],
          ),
        ),
        rfq: event('rfq', {
          type: 'object',
          description:
            "The private rfq channel of the connection's user and world (scope orders:read or rfq:respond). `event` names the message. The requester hears quote.received {rfq_id, market_id, quote}, quote.cancelled {rfq_id, quote_id, status} (withdrawn, replaced, expired) and rfq.expired {rfq}; approved responders of the world hear rfq.created {rfq: id, market_id, quantity, status, expires_at, created_at, environment} and rfq.closed {rfq_id, market_id, status}; both parties hear quote.accepted (the requester {rfq, quote, trade}, the responder {rfq_id, market_id, quote, trade}). Nothing a responder receives names the requester. Inside an ephemeral world the channel carries that world's RFQs only (the house quotes them; its requester hears them with world_id). Quotes are {id, rfq_id, bid, ask, quantity, status, expires_at, created_at, environment} in YES cents; trade is {id, market_id, price, no_price, quantity, taker_side, source: RFQ, created_at}.",
          properties: {
            event: {
              enum: [
                'rfq.created',
                'rfq.closed',
                'rfq.expired',
                'quote.received',
                'quote.cancelled',
                'quote.accepted',
              ],
            },
            rfq: { type: 'object' },
            rfq_id: str,
            market_id: str,
            quote: { type: 'object' },
            quote_id: str,
            status: str,
            trade: { type: 'object' },
          },
          required: ['event'],
        }),
      },
    },
  };
}
