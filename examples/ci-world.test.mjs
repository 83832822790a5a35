// Testing an integration in CI against an ephemeral world (README: "Testing your integration in
// CI"). Plain Node (>= 20): node:test, node:assert and the global fetch, no dependencies.
//
//   SVC_BASE_URL=http://127.0.0.1:3000 SVC_TEST_KEY=svc_test_... node --test examples/ci-world.test.mjs
//
// SVC_TEST_KEY is a test key with markets:read, orders:read, orders:write, wallet:read,
// webhooks:read and webhooks:write; the world key it makes carries the same scopes. The server
// must run with SANDBOX_CLOCK_CONTROL=true (POST /sandbox/clock exists) and allow webhook URLs on
// 127.0.0.1 (WEBHOOK_ALLOW_PRIVATE_TARGETS, on by default outside APP_ENV=production): the webhook
// receiver of this file listens on 127.0.0.1.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';

const BASE = `${(process.env.SVC_BASE_URL ?? 'http://127.0.0.1:3000').replace(/\/+$/, '')}/api/v1`;
const TEST_KEY = process.env.SVC_TEST_KEY ?? '';
const SEED = 20261129;

/** One JSON call with a key: status, headers and parsed body. */
async function call(key, method, path, body) {
  const res = await fetch(`${BASE}${path}`, {
    method,
    headers: {
      'x-api-key': key,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text === '' ? null : JSON.parse(text) };
}

/** Polls `read` until `done(value)` holds (the webhook worker runs beside the request path). */
async function until(read, done, what, ms = 15_000) {
  const end = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > end)
      throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

// A local webhook receiver: it answers 200 and keeps what it got.
const received = [];
const receiver = createServer((req, res) => {
  let raw = '';
  req.on('data', (c) => (raw += c));
  req.on('end', () => {
    received.push({ headers: req.headers, body: JSON.parse(raw) });
    res.writeHead(200).end('ok');
  });
});

const world = { id: '', key: '' };
let deleted = false;

before(async () => {
  assert.ok(TEST_KEY.startsWith('svc_test_'), 'set SVC_TEST_KEY to a test key (svc_test_...)');
  await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
});

after(async () => {
  // A failed run still removes its world (it would expire at its TTL anyway).
  if (world.id !== '' && !deleted) await call(TEST_KEY, 'DELETE', `/sandbox/worlds/${world.id}`);
  await new Promise((resolve) => receiver.close(resolve));
});

test('creates a world with a seed', async () => {
  const res = await call(TEST_KEY, 'POST', '/sandbox/worlds', {
    name: 'ci',
    seed: SEED,
    ttl_seconds: 900,
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  assert.match(res.body.id, /^wld_/);
  assert.match(res.body.key, /^svc_test_/);
  assert.equal(res.body.seed, SEED);
  world.id = res.body.id;
  world.key = res.body.key;
});

test('trades against the seeded path: an order fills against the house', async () => {
  // The world's own feed moves only with its clock: one minute of the seeded price path.
  const clock = await call(world.key, 'POST', '/sandbox/clock', { advance_seconds: 60 });
  assert.equal(clock.status, 200, JSON.stringify(clock.body));
  const markets = await call(world.key, 'GET', '/markets?status=OPEN&limit=50');
  assert.equal(markets.status, 200);
  let market = null;
  let ask = null;
  for (const m of markets.body.data) {
    const book = await call(world.key, 'GET', `/markets/${m.id}/orderbook?depth=1`);
    if (book.status === 200 && book.body.asks.length > 0 && book.body.asks[0].quantity >= 2) {
      market = m.id;
      ask = book.body.asks[0].price;
      break;
    }
  }
  assert.ok(market !== null, 'an open market with a house ask');

  const order = await call(world.key, 'POST', '/orders', {
    market_id: market,
    action: 'BUY',
    side: 'YES',
    type: 'LIMIT',
    price: ask,
    quantity: 2,
    client_order_id: 'ci-fill-1',
  });
  assert.equal(order.status, 201, JSON.stringify(order.body));
  assert.equal(order.body.status, 'FILLED');
  assert.equal(order.body.filled_quantity, 2);
  assert.deepEqual(
    order.body.fills.map((f) => [f.price, f.quantity]),
    [[ask, 2]],
  );

  const positions = await call(world.key, 'GET', '/positions/cursor');
  assert.equal(positions.status, 200);
  const held = positions.body.data.find((p) => p.market_id === market);
  assert.ok(held, 'a position in the market');
  assert.equal(held.side, 'YES');
  assert.equal(held.quantity, 2);
  assert.equal(held.average_price, ask);
});

test('a REJECT scenario answers the documented code, marked Svc-Scenario', async () => {
  const s = await call(world.key, 'POST', '/sandbox/scenarios', {
    match: { operation: 'POST /orders', client_order_id_prefix: 'ci-reject-' },
    effect: { type: 'REJECT', code: 'INSUFFICIENT_FUNDS' },
  });
  assert.equal(s.status, 201, JSON.stringify(s.body));
  const res = await call(world.key, 'POST', '/orders', {
    market_id: (await firstOpenMarket()).id,
    action: 'BUY',
    side: 'YES',
    type: 'LIMIT',
    price: 1,
    quantity: 1,
    client_order_id: 'ci-reject-1',
  });
  assert.equal(res.status, 422);
  assert.equal(res.body.error.code, 'INSUFFICIENT_FUNDS');
  assert.equal(res.body.error.details.scenario_id, s.body.id);
  assert.equal(res.headers.get('svc-scenario'), s.body.id);
});

test('a RATE_LIMIT scenario answers 429 RATE_LIMITED with Retry-After; the retry goes through', async () => {
  const s = await call(world.key, 'POST', '/sandbox/scenarios', {
    match: { operation: 'GET /wallet' },
    effect: { type: 'RATE_LIMIT', retry_after_seconds: 2 },
  });
  assert.equal(s.status, 201, JSON.stringify(s.body));
  const limited = await call(world.key, 'GET', '/wallet');
  assert.equal(limited.status, 429);
  assert.equal(limited.body.error.code, 'RATE_LIMITED');
  assert.equal(limited.headers.get('retry-after'), '2');
  assert.equal(limited.headers.get('svc-scenario'), s.body.id);
  // The scenario fired its one time: the client's retry is served.
  const retry = await call(world.key, 'GET', '/wallet');
  assert.equal(retry.status, 200);
  assert.equal(retry.headers.get('svc-scenario'), null);
});

test('simulated webhook failures retry and dead-letter on the world clock; the replay arrives', async () => {
  const url = `http://127.0.0.1:${receiver.address().port}/hooks`;
  const ep = await call(world.key, 'POST', '/webhooks', { url, events: ['webhook.test'] });
  assert.equal(ep.status, 201, JSON.stringify(ep.body));
  const id = ep.body.id;
  // More failures than any retry schedule has attempts: every attempt fails, none is sent.
  const sim = await call(world.key, 'POST', `/webhooks/${id}/simulate-failures`, {
    count: 50,
    mode: 'HTTP_500',
  });
  assert.equal(sim.status, 200, JSON.stringify(sim.body));
  const sent = await call(world.key, 'POST', `/webhooks/${id}/test`);
  assert.equal(sent.status, 202, JSON.stringify(sent.body));
  const deliveryId = sent.body.id;
  const delivery = () => call(world.key, 'GET', `/webhooks/${id}/deliveries/${deliveryId}`);

  // Each retry waits on the world's clock: move it to the next attempt and watch it happen.
  let d = (await until(delivery, (r) => r.body.attempts >= 1, 'the first attempt')).body;
  for (let n = 1; d.status === 'PENDING'; n++) {
    assert.ok(n < 20, 'dead-lettered within 20 attempts');
    assert.equal(d.response_status, 500);
    const now = (await call(world.key, 'POST', '/sandbox/clock', { advance_seconds: 0 })).body.now;
    const wait = Math.ceil((Date.parse(d.next_attempt_at) - Date.parse(now)) / 1000);
    assert.ok(wait > 0, 'the retry is not due before the world clock reaches it');
    await call(world.key, 'POST', '/sandbox/clock', { advance_seconds: wait + 1 });
    d = (await until(delivery, (r) => r.body.attempts > n, `attempt ${n + 1}`)).body;
  }
  assert.equal(d.status, 'DEAD_LETTERED');
  assert.ok(d.attempts > 1, 'retried before the dead letter');
  assert.equal(d.attempt_log.length, d.attempts);
  assert.ok(
    d.attempt_log.every((a) => a.simulated === true),
    'every attempt simulated',
  );
  assert.equal(received.length, 0, 'a simulated failure sends nothing');

  // Cleared, the replay reaches the receiver; the event names its world.
  const cleared = await call(world.key, 'DELETE', `/webhooks/${id}/simulate-failures`);
  assert.equal(cleared.status, 200);
  const replay = await call(world.key, 'POST', `/webhooks/${id}/deliveries/${deliveryId}/replay`);
  assert.equal(replay.status, 202, JSON.stringify(replay.body));
  const done = await until(
    () => call(world.key, 'GET', `/webhooks/${id}/deliveries/${replay.body.id}`),
    (r) => r.body.status === 'SUCCEEDED',
    'the replay to succeed',
  );
  assert.equal(done.body.response_status, 200);
  await until(
    async () => received.length,
    (n) => n === 1,
    'the replay at the receiver',
  );
  assert.equal(received[0].headers['svc-webhook-id'], replay.body.id);
  assert.equal(received[0].body.type, 'webhook.test');
  assert.equal(received[0].body.world_id, world.id);
});

test('deleting the world revokes its key: 401 API_KEY_REVOKED', async () => {
  const del = await call(TEST_KEY, 'DELETE', `/sandbox/worlds/${world.id}`);
  assert.equal(del.status, 204);
  deleted = true;
  const res = await call(world.key, 'GET', '/wallet');
  assert.equal(res.status, 401);
  assert.equal(res.body.error.code, 'API_KEY_REVOKED');
  const gone = await call(TEST_KEY, 'GET', `/sandbox/worlds/${world.id}`);
  assert.equal(gone.status, 404);
});

/** The world's first open market (the seeded markets). */
async function firstOpenMarket() {
  const res = await call(world.key, 'GET', '/markets?status=OPEN&limit=1');
  assert.equal(res.status, 200);
  return res.body.data[0];
}
