import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { WS_CLOSE } from '../../src/modules/realtime/ws-errors.js';
import { WS_MAX_MESSAGE_BYTES } from '../../src/modules/realtime/realtime.gateway.js';
import { http, type Running } from '../support/harness.js';
import {
  as,
  cancel,
  limit,
  market,
  ORDER_SCOPES,
  place,
  startOrdersApp,
  trader,
  TRADABLE,
} from '../support/orders.js';
import { WsClient, type WsMessage } from '../support/ws.js';

type Json = Record<string, unknown>;

/** Resolves a local `#/a/b` JSON pointer. */
function resolve(doc: Json, ref: string): unknown {
  expect(ref.startsWith('#/')).toBe(true);
  return ref
    .slice(2)
    .split('/')
    .reduce<unknown>((node, part) => (node as Json | undefined)?.[part.replace(/~1/g, '/')], doc);
}

/** Every `$ref` anywhere in the document. */
function refs(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const n of node) refs(n, out);
  else if (node !== null && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refs(v, out);
    }
  }
  return out;
}

/**
 * A small JSON Schema checker for the keywords the AsyncAPI payloads use (type, const, enum,
 * properties, required, items, oneOf). Returns the problems found.
 */
function check(schema: Json, value: unknown, path = '$'): string[] {
  const problems: string[] = [];
  const typeOf = (v: unknown): string =>
    v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v;
  if (schema.type !== undefined) {
    const types = ([] as string[]).concat(schema.type as string | string[]);
    const t = typeOf(value);
    if (!types.includes(t) && !(t === 'integer' && types.includes('number')))
      problems.push(`${path}: ${t} is not ${types.join('|')}`);
  }
  if ('const' in schema && value !== schema.const)
    problems.push(`${path}: ${JSON.stringify(value)} !== ${JSON.stringify(schema.const)}`);
  if (schema.enum !== undefined && !(schema.enum as unknown[]).includes(value))
    problems.push(`${path}: ${JSON.stringify(value)} not in enum`);
  if (schema.oneOf !== undefined) {
    const ok = (schema.oneOf as Json[]).filter((s) => check(s, value, path).length === 0);
    if (ok.length !== 1) problems.push(`${path}: matches ${ok.length} of oneOf`);
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const obj = value as Json;
    for (const r of (schema.required as string[] | undefined) ?? [])
      if (!(r in obj)) problems.push(`${path}.${r}: required`);
    for (const [k, s] of Object.entries((schema.properties as Json | undefined) ?? {}))
      if (k in obj) problems.push(...check(s as Json, obj[k], `${path}.${k}`));
  }
  if (Array.isArray(value) && schema.items !== undefined)
    value.forEach((v, i) => problems.push(...check(schema.items as Json, v, `${path}[${i}]`)));
  return problems;
}

/** The component message that describes a server message. */
function componentOf(msg: WsMessage): string {
  if (msg.type !== 'event') {
    return (
      {
        auth_ok: 'authOk',
        subscribed: 'subscribed',
        unsubscribed: 'unsubscribed',
        pong: 'pong',
        error: 'error',
      } as Record<string, string>
    )[msg.type];
  }
  return (msg.channel as string).split(':')[0];
}

describe('realtime: AsyncAPI document', () => {
  let svc: Running;
  let doc: Json;

  beforeAll(async () => {
    svc = await startOrdersApp();
    const res = await http(`${svc.api}/asyncapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    doc = res.body as Json;
  });
  afterAll(async () => {
    await svc.close();
  });

  it('is AsyncAPI 3.0.0 with the /api/v1/ws channel and a message for auth, subscribe and every channel', () => {
    expect(doc.asyncapi).toBe('3.0.0');
    expect(doc.info).toMatchObject({ title: expect.any(String), version: expect.any(String) });
    const channels = Object.values(doc.channels as Record<string, Json>);
    const feed = channels.find((c) => c.address === '/api/v1/ws');
    expect(feed).toBeDefined();
    const messages = Object.keys(feed!.messages as Json);
    expect(messages).toEqual(
      expect.arrayContaining([
        'auth',
        'authOk',
        'subscribe',
        'subscribed',
        'unsubscribe',
        'unsubscribed',
        'ping',
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
      ]),
    );
    // Every $ref resolves inside the document; each message has a payload schema.
    for (const r of refs(doc))
      expect({ r, found: resolve(doc, r) !== undefined }).toEqual({ r, found: true });
    for (const name of messages) {
      const m = resolve(doc, ((feed!.messages as Json)[name] as Json).$ref as string) as Json;
      expect(m.payload).toMatchObject({ type: 'object' });
    }
    // Operations: the server receives auth/subscribe/unsubscribe/ping and sends the rest.
    const ops = Object.values(doc.operations as Record<string, Json>);
    const byAction = (a: string): string[] =>
      ops
        .filter((o) => o.action === a)
        .flatMap((o) => (o.messages as Json[]).map((x) => (x.$ref as string).split('/').pop()!));
    expect(byAction('receive').sort()).toEqual(['auth', 'ping', 'subscribe', 'unsubscribe']);
    expect(byAction('send')).toEqual(
      expect.arrayContaining(['authOk', 'error', 'orderbook', 'fills', 'wallet', 'pong']),
    );
  });

  it('names every close code the server uses and the error codes of the stream', () => {
    const text = (doc.info as Json).description as string;
    for (const code of Object.values(WS_CLOSE)) expect(text).toContain(String(code));
    // The protocol-level close for an oversized client message (ws's maxPayload).
    expect(text).toContain(`1009 a client message over ${WS_MAX_MESSAGE_BYTES / 1024} KiB`);
    expect(text).toContain('1001 the server shutting down');
    for (const code of [
      'UNAUTHENTICATED',
      'INSUFFICIENT_SCOPE',
      'API_KEY_REVOKED',
      'API_KEY_ROTATED',
      'API_KEY_EXPIRED',
      'SANDBOX_DISABLED',
      'BAD_MESSAGE',
      'UNKNOWN_CHANNEL',
      'SUBSCRIPTION_LIMIT',
      'CONNECTION_LIMIT',
    ])
      expect(text).toContain(code);
  });

  it('the OpenAPI document links it (externalDocs)', async () => {
    const res = await http(`${svc.api}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.body.externalDocs.url).toMatch(/\/api\/v1\/asyncapi\.json$/);
    // And the document itself is listed as an operation of the contract.
    expect(
      res.body.paths['/api/v1/asyncapi.json']?.get ?? res.body.paths['/asyncapi.json']?.get,
    ).toBeDefined();
  });

  it('describes the messages on the wire: every real message matches its payload schema', async () => {
    const m = TRADABLE[4];
    const a = await trader(svc, undefined, {
      scopes: [...ORDER_SCOPES, 'websocket', 'wallet:write', 'notifications:read'],
    });
    const b = await trader(svc, 'responder@sandbox.test', {
      scopes: [...ORDER_SCOPES, 'websocket'],
    });
    const sent: Json[] = [];
    const c = await WsClient.connect(svc.baseUrl);
    const send = (x: Json): void => {
      sent.push(x);
      c.send(x);
    };
    send({ type: 'auth', api_key: a.key });
    await c.waitFor((x) => x.type === 'auth_ok');
    const all = [
      `orderbook:${m.id}`,
      `trades:${m.id}`,
      'crypto:BTC-USD',
      'ticker',
      'orders',
      'fills',
      'positions',
      'wallet',
      'notifications',
    ];
    send({ type: 'subscribe', channels: all });
    await c.waitFor((x) => x.type === 'event');
    send({ type: 'subscribe', channels: ['nope'] }); // an error message
    // Orders of every kind: resting, amended, crossing (fills, trades), cancelled, expired (IOC).
    const o = await place(svc, a, limit(m, 'BUY', 'YES', m.reference - 10, 5));
    expect(
      (await as(a, `${svc.api}/orders/${o.id}`, { method: 'PATCH', json: { quantity: 3 } })).status,
    ).toBe(200);
    await place(svc, a, limit(m, 'BUY', 'YES', m.reference, 4));
    await place(svc, b, limit(m, 'SELL', 'YES', m.reference, 2));
    await place(svc, a, market(m, 'BUY', 'YES', 2));
    await place(svc, a, limit(m, 'BUY', 'YES', 1, 2, { time_in_force: 'IOC' }));
    expect((await cancel(svc, a, o.id)).status).toBe(200);
    // A sandbox reset (account.reset, flat positions, wallet RESET), then a settled position.
    await place(svc, a, limit(m, 'BUY', 'YES', m.reference - 10, 1));
    expect((await as(a, `${svc.api}/sandbox/reset`, { method: 'POST' })).status).toBe(200);
    await place(svc, a, market(m, 'BUY', 'YES', 1));
    const resolved = await as(a, `${svc.api}/sandbox/markets/${m.id}/resolve`, {
      method: 'POST',
      json: { outcome: 'NO' },
    });
    expect(resolved.status).toBe(200);
    // A paper index move (crypto:<symbol>).
    expect(
      (
        await as(a, `${svc.api}/sandbox/crypto/BTC-USD/price`, {
          method: 'POST',
          json: { price: '101000.00' },
        })
      ).status,
    ).toBe(200);
    await c.sync();
    expect(c.events('positions').some((x) => x.data.settled !== undefined)).toBe(true);
    // The holder's MARKET_RESOLVED notification.
    await c.waitFor((x) => x.type === 'event' && x.channel === 'notifications');
    const last = c.mark();
    send({ type: 'unsubscribe', channels: ['ticker'] });
    send({ type: 'ping' });
    await c.waitFor((x) => x.type === 'pong', 3000, last);

    const components = (doc.components as Json).messages as Record<string, Json>;
    // The checker does catch a mismatch.
    expect(
      check(components.fills.payload as Json, {
        type: 'event',
        channel: 'fills',
        seq: 0.5,
        data: { liquidity: 'BOTH' },
      }),
    ).toEqual([
      '$.ts: required',
      '$.time: required',
      '$.seq: number is not integer',
      ...['id', 'order_id', 'market_id', 'side', 'price', 'yes_price', 'quantity'].map(
        (f) => `$.data.${f}: required`,
      ),
      '$.data.created_at: required',
      '$.data.liquidity: "BOTH" not in enum',
    ]);
    for (const msg of sent) {
      const name = msg.type as string;
      expect({ name, problems: check(components[name].payload as Json, msg) }).toEqual({
        name,
        problems: [],
      });
    }
    const seen = new Set<string>();
    for (const msg of c.messages) {
      const name = componentOf(msg);
      expect(components[name]).toBeDefined();
      seen.add(name);
      const problems = check(components[name].payload as Json, msg);
      expect({ msg, problems }).toEqual({ msg, problems: [] });
      if (msg.type === 'event' && msg.channel === 'orders') seen.add(msg.data.event as string);
    }
    expect([...seen].sort()).toEqual(
      [
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
        'order.accepted',
        'order.updated',
        'order.cancelled',
        'order.expired',
        'order.amended',
        'account.reset',
      ].sort(),
    );
    await c.close();
  });
});
