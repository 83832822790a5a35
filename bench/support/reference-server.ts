/**
 * The lean reference server bench:orders compares the service against (issue 23): the same
 * server as the anchor ../shared/anchors/http/server.mjs — plain Fastify 5 without a logger,
 * Ajv body validation from a JSON schema, fast-json-stringify responses, and one prepared
 * INSERT ... RETURNING per accepted order into a WAL-mode SQLite file (better-sqlite3,
 * synchronous=NORMAL), committed before the answer. Its body schema takes the fields the
 * service's POST /orders takes (time_in_force, post_only, self_trade_prevention too), so both
 * servers get the very same request stream; it ignores the X-API-Key header.
 *
 *   GET  /health         -> 200 {"status":"ok"}
 *   POST /api/v1/orders  -> 201 the inserted row; 400 on a body that fails the schema
 *
 * Run as a child process: `node reference-server.js <port> <db file>`; prints "LISTENING <port>"
 * once ready and answers the IPC message 'count' with `{ count }` (rows stored).
 */
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';

const port = Number(process.argv[2] ?? 0);
const dbPath = process.argv[3];
if (dbPath === undefined) throw new Error('usage: reference-server.js <port> <db file>');

for (const suffix of ['', '-wal', '-shm']) rmSync(dbPath + suffix, { force: true });
const db = new Database(dbPath);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec(`
  CREATE TABLE orders (
    id              TEXT PRIMARY KEY,
    market_id       TEXT NOT NULL,
    action          TEXT NOT NULL,
    side            TEXT NOT NULL,
    type            TEXT NOT NULL,
    price           INTEGER,
    quantity        INTEGER NOT NULL,
    time_in_force   TEXT NOT NULL,
    client_order_id TEXT,
    status          TEXT NOT NULL,
    created_at      TEXT NOT NULL
  )
`);
const insert = db.prepare(`
  INSERT INTO orders (id, market_id, action, side, type, price, quantity, time_in_force,
                      client_order_id, status, created_at)
  VALUES (@id, @market_id, @action, @side, @type, @price, @quantity, @time_in_force,
          @client_order_id, 'OPEN', @created_at)
  RETURNING *
`);

interface OrderBody {
  market_id: string;
  action: string;
  side: string;
  type: string;
  price?: number;
  quantity: number;
  time_in_force?: string;
  client_order_id?: string;
}

const orderBody = {
  type: 'object',
  additionalProperties: false,
  required: ['market_id', 'action', 'side', 'type', 'quantity'],
  properties: {
    market_id: { type: 'string', minLength: 1, maxLength: 64 },
    action: { type: 'string', enum: ['BUY', 'SELL'] },
    side: { type: 'string', enum: ['YES', 'NO'] },
    type: { type: 'string', enum: ['LIMIT', 'MARKET'] },
    price: { type: 'integer', minimum: 1, maximum: 99 },
    quantity: { type: 'integer', minimum: 1, maximum: 1_000_000_000 },
    time_in_force: { type: 'string', enum: ['GTC', 'IOC', 'FOK'] },
    post_only: { type: 'boolean' },
    self_trade_prevention: {
      type: 'string',
      enum: ['CANCEL_TAKER', 'CANCEL_MAKER', 'CANCEL_BOTH'],
    },
    client_order_id: { type: 'string', minLength: 1, maxLength: 64 },
  },
};
const orderRow = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    market_id: { type: 'string' },
    action: { type: 'string' },
    side: { type: 'string' },
    type: { type: 'string' },
    price: { type: ['integer', 'null'] },
    quantity: { type: 'integer' },
    time_in_force: { type: 'string' },
    client_order_id: { type: ['string', 'null'] },
    status: { type: 'string' },
    created_at: { type: 'string' },
  },
};

const app = Fastify({ logger: false });

app.get(
  '/health',
  { schema: { response: { 200: { type: 'object', properties: { status: { type: 'string' } } } } } },
  () => ({ status: 'ok' }),
);

app.post<{ Body: OrderBody }>(
  '/api/v1/orders',
  { schema: { body: orderBody, response: { 201: orderRow } } },
  (req, reply) => {
    const b = req.body;
    const row = insert.get({
      id: randomUUID(),
      market_id: b.market_id,
      action: b.action,
      side: b.side,
      type: b.type,
      price: b.price ?? null,
      quantity: b.quantity,
      time_in_force: b.time_in_force ?? (b.type === 'MARKET' ? 'IOC' : 'GTC'),
      client_order_id: b.client_order_id ?? null,
      created_at: new Date().toISOString(),
    });
    void reply.code(201);
    return row;
  },
);

const shutdown = (): void => {
  void app.close().finally(() => {
    db.close();
    process.exit(0);
  });
};
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
process.on('message', (m) => {
  if (m === 'count') {
    const n = (db.prepare('SELECT count(*) AS n FROM orders').get() as { n: number }).n;
    process.send?.({ count: n });
  }
});

await app.listen({ port, host: '127.0.0.1' });
const address = app.server.address();
process.stdout.write(
  `LISTENING ${address !== null && typeof address === 'object' ? address.port : port}\n`,
);
