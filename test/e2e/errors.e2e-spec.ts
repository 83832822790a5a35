import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import fc from 'fast-check';
import {
  expectContractError,
  http,
  logLines,
  rawRequest,
  startApp,
  type JsonResponse,
  type Running,
} from '../support/harness.js';
import { trader } from '../support/orders.js';
import { WsClient } from '../support/ws.js';
import { openDatabaseOf, testDatabaseIsPostgres } from '../support/test-database.js';

/** What no response body may ever contain: stack frames, driver and ORM internals, file paths. */
const LEAKS = [
  /\n\s+at /,
  /\bat .+\(.*:\d+:\d+\)/,
  /SQLITE/i,
  /QueryFailed/,
  /node_modules/,
  /\.ts:\d+/,
];

function expectNoLeak(text: string): void {
  for (const re of LEAKS) expect(text).not.toMatch(re);
}

describe('error model: every error path answers the contract body', () => {
  let svc: Running;
  beforeAll(async () => {
    svc = await startApp({ env: { SANDBOX_CLOCK_CONTROL: 'true', BODY_LIMIT_BYTES: '2048' } });
  });
  afterAll(async () => {
    await svc.close();
  });

  const clock = (init: RequestInit & { json?: unknown }) =>
    http(`${svc.api}/sandbox/clock`, { method: 'POST', ...init });

  it('400 VALIDATION_FAILED names each failing field in details.fields', async () => {
    const bad = expectContractError(
      await clock({ json: { advance_seconds: 'soon' } }),
      400,
      'VALIDATION_FAILED',
    );
    expect(bad.details.fields).toEqual([{ field: 'advance_seconds', message: expect.any(String) }]);

    const unknown = expectContractError(
      await clock({ json: { advance_seconds: 1, extra: true } }),
      400,
      'VALIDATION_FAILED',
    );
    expect(unknown.details.fields).toEqual([{ field: 'extra', message: expect.any(String) }]);

    const query = expectContractError(
      await http(`${svc.api}/markets?limit=0&status=SOMETIMES`),
      400,
      'VALIDATION_FAILED',
    );
    expect(query.details.fields.map((f: { field: string }) => f.field).sort()).toEqual([
      'limit',
      'status',
    ]);
    for (const f of query.details.fields) expect(f.message.length).toBeGreaterThan(0);
  });

  it('a query parameter the operation does not take is 400 on every operation, not ignored', async () => {
    const t = await trader(svc);
    // The export takes filters; one it does not take would otherwise look applied.
    const exported = expectContractError(
      await http(`${svc.api}/orders/export?side=YES`, { headers: { 'x-api-key': t.key } }),
      400,
      'VALIDATION_FAILED',
    );
    expect(exported.details.fields).toEqual([
      { field: 'side', message: 'side must not be sent (not a known field)' },
    ]);
    const wallet = expectContractError(
      await http(`${svc.api}/wallet?foo=1&bar=2`, { headers: { 'x-api-key': t.key } }),
      400,
      'VALIDATION_FAILED',
    );
    expect(wallet.details.fields.map((f: { field: string }) => f.field)).toEqual(['foo', 'bar']);
    // HEAD like GET; an operation with its own parameters names the stranger only; a name-less
    // parameter is named as such.
    expect(
      (await http(`${svc.api}/wallet?x=1`, { method: 'HEAD', headers: { 'x-api-key': t.key } }))
        .status,
    ).toBe(400);
    const nameless = expectContractError(
      await http(`${svc.api}/wallet?=1`, { headers: { 'x-api-key': t.key } }),
      400,
      'VALIDATION_FAILED',
    );
    expect(nameless.details.fields).toEqual([
      { field: '', message: 'a query parameter must have a name' },
    ]);
    // The public POSTs take only what they list, like every operation but the public reads.
    for (const path of ['/auth/login', '/auth/register', '/auth/verify-email']) {
      const bad = expectContractError(
        await http(`${svc.api}${path}?zzz=1`, { method: 'POST', json: {} }),
        400,
        'VALIDATION_FAILED',
      );
      expect([path, bad.details.fields[0]]).toEqual([
        path,
        { field: 'zzz', message: 'zzz must not be sent (not a known field)' },
      ]);
    }
    // Public documents and the health probe take cache-busters (?_=...) as they are.
    expect((await http(`${svc.api}/health?x=1`, { method: 'HEAD' })).status).toBe(200);
    expect((await http(`${svc.api}/openapi.json?_=123`)).status).toBe(200);
    expect((await http(`${svc.api}/changelog?utm_source=x`)).status).toBe(200);
    const book = expectContractError(
      await http(`${svc.api}/markets?limit=1&sort=asc`),
      400,
      'VALIDATION_FAILED',
    );
    expect(book.details.fields).toEqual([
      { field: 'sort', message: 'sort must not be sent (not a known field)' },
    ]);
    // At most 20 fields are listed, like any validation answer; the rest are counted.
    const many = Array.from({ length: 50 }, (_, i) => `p${i}=`).join('&');
    const capped = expectContractError(
      await http(`${svc.api}/wallet?${many}`, { headers: { 'x-api-key': t.key } }),
      400,
      'VALIDATION_FAILED',
    );
    expect(capped.details.fields).toHaveLength(20);
    expect(capped.details.fields_omitted).toBe(30);
    // A documented parameter given twice is named as such.
    const twice = expectContractError(
      await http(`${svc.api}/markets?limit=1&limit=2`),
      400,
      'VALIDATION_FAILED',
    );
    expect(twice.details.fields).toEqual([
      { field: 'limit', message: 'limit must be given at most once' },
    ]);
    // A trailing slash is no route, whatever the query (it reached /markets/:id with an empty id).
    expectContractError(await http(`${svc.api}/markets/?limit=1`), 404, 'NOT_FOUND');
    // The credential comes first: without one, 401 whatever the query.
    expectContractError(await http(`${svc.api}/wallet?foo=1`), 401, 'UNAUTHENTICATED');
    // Documented parameters pass.
    expect((await http(`${svc.api}/markets?limit=1`)).status).toBe(200);
    expect(
      (await http(`${svc.api}/orders/export`, { headers: { 'x-api-key': t.key } })).status,
    ).toBe(200);
  });

  it('400 MALFORMED_JSON for broken JSON (an empty body is no body); prototype-poisoning keys are fields no operation takes', async () => {
    const headers = { 'content-type': 'application/json' };
    const broken = await clock({ headers, body: '{"advance_seconds":' });
    expect(expectContractError(broken, 400, 'MALFORMED_JSON').details).toEqual({});
    // No body: the operation's required field is missing, not the JSON broken.
    const empty = expectContractError(await clock({ headers, body: '' }), 400, 'VALIDATION_FAILED');
    expect(empty.details.fields.map((f: { field: string }) => f.field)).toEqual([
      'advance_seconds',
    ]);
    for (const [body, field] of [
      ['{"__proto__":{"admin":true},"advance_seconds":1}', '__proto__'],
      ['{"advance_seconds":1,"constructor":{"prototype":{"admin":true}}}', 'constructor'],
    ]) {
      const poisoned = expectContractError(
        await clock({ headers, body }),
        400,
        'VALIDATION_FAILED',
      );
      expect(poisoned.details.fields).toEqual([
        { field, message: `${field} must not be sent (not a known field)` },
      ]);
    }
    expectContractError(
      await clock({ headers: { 'content-type': 'application/json; charset=utf-8' }, body: '{' }),
      400,
      'MALFORMED_JSON',
    );
  });

  it('an operation that takes no body refuses one (an empty object is no body)', async () => {
    const t = await trader(svc);
    const reset = (body: string) =>
      http(`${svc.api}/orders/cancel-on-disconnect`, {
        method: 'DELETE',
        headers: { 'x-api-key': t.key, 'content-type': 'application/json' },
        body,
      });
    const named = expectContractError(await reset('{"bogus_field":1}'), 400, 'VALIDATION_FAILED');
    expect(named.details.fields).toEqual([
      { field: 'bogus_field', message: 'bogus_field must not be sent (not a known field)' },
    ]);
    for (const body of ['[1]', '"x"']) {
      const refused = expectContractError(await reset(body), 400, 'VALIDATION_FAILED');
      expect([body, refused.details.fields]).toEqual([
        body,
        [{ field: 'body', message: 'body must be absent: this operation takes none' }],
      ]);
    }
    // {} and null are no body, as many clients send them with every DELETE.
    expect((await reset('{}')).status).toBe(200);
    expect((await reset('null')).status).toBe(200);
    const none = await http(`${svc.api}/orders/cancel-on-disconnect`, {
      method: 'DELETE',
      headers: { 'x-api-key': t.key },
    });
    expect(none.status).toBe(200);
  });

  it('404 NOT_FOUND for unknown routes inside and outside /api/v1', async () => {
    for (const [method, path] of [
      ['GET', '/api/v1/nope'],
      ['POST', '/api/v1/nope'],
      ['GET', '/api/v1'],
      ['GET', '/api/v2/markets'],
      ['GET', '/nope'],
      ['GET', '/'],
      ['DELETE', '/favicon.ico'],
    ]) {
      const res = await http(`${svc.baseUrl}${path}`, { method });
      expectContractError(res, 404, 'NOT_FOUND');
    }
  });

  it('405 METHOD_NOT_ALLOWED with an Allow header listing the methods of the path', async () => {
    const del = await http(`${svc.api}/indices`, { method: 'DELETE' });
    const err = expectContractError(del, 405, 'METHOD_NOT_ALLOWED');
    expect(del.headers.get('allow')).toBe('GET, HEAD');
    expect(err.details.allowed_methods).toEqual(['GET', 'HEAD']);
    // A path with writes lists them too (POST /markets creates a market).
    const delMarkets = await http(`${svc.api}/markets`, { method: 'DELETE' });
    expectContractError(delMarkets, 405, 'METHOD_NOT_ALLOWED');
    expect(delMarkets.headers.get('allow')).toBe('GET, POST, HEAD');

    const put = await http(`${svc.api}/markets/mkt_0123456789abcdef0123`, { method: 'PUT' });
    expectContractError(put, 405, 'METHOD_NOT_ALLOWED');
    expect(put.headers.get('allow')).toBe('GET, PATCH, HEAD');

    const get = await http(`${svc.api}/sandbox/clock`);
    expectContractError(get, 405, 'METHOD_NOT_ALLOWED');
    expect(get.headers.get('allow')).toBe('POST');
    // HEAD is answered as GET is: a trailing slash is no route for either (never a 405 whose
    // Allow header lists HEAD itself); a POST-only path refuses both.
    expect((await http(`${svc.api}/health/`)).status).toBe(404);
    expect((await http(`${svc.api}/health/`, { method: 'HEAD' })).status).toBe(404);
    const head = await http(`${svc.api}/sandbox/clock`, { method: 'HEAD' });
    expect(head.status).toBe(405);
    expect(head.headers.get('allow')).toBe('POST');

    // A percent-encoded spelling of the same path is the same path.
    const encoded = await http(`${svc.api}/%69ndices`, { method: 'DELETE' });
    expectContractError(encoded, 405, 'METHOD_NOT_ALLOWED');
    expect(encoded.headers.get('allow')).toBe('GET, HEAD');
    expectContractError(
      await http(`${svc.api}/%E0%A4%A`, { method: 'DELETE' }),
      400,
      'BAD_REQUEST',
    );
  });

  it('a fixed path is not taken for an id: GET /orders/batch is 405 (POST only), not order "batch"', async () => {
    const t = await trader(svc);
    const cases: [string, string, string][] = [
      ['GET', '/orders/batch', 'POST'],
      ['PATCH', '/orders/batch', 'POST'],
      ['DELETE', '/orders/batch', 'POST'],
      ['PUT', '/orders/batch', 'POST'],
      ['GET', '/orders/quote', 'POST'],
      ['GET', '/orders/cancel-all', 'POST'],
      ['PUT', '/orders/cancel-all', 'POST'],
      ['GET', '/orders/cancel-batch', 'POST'],
      ['PATCH', '/orders/cancel-on-disconnect', 'DELETE, GET, POST, HEAD'],
      ['DELETE', '/orders/export', 'GET, HEAD'],
      ['PATCH', '/orders/export', 'GET, HEAD'],
    ];
    for (const [method, path, allow] of cases) {
      const res = await http(`${svc.api}${path}`, {
        method,
        headers: { 'x-api-key': t.key },
        ...(method === 'GET' ? {} : { json: {} }),
      });
      const err = expectContractError(res, 405, 'METHOD_NOT_ALLOWED');
      expect({ method, path, allow: res.headers.get('allow') }).toEqual({ method, path, allow });
      expect(err.details.allowed_methods.join(', ')).toBe(allow);
    }
    // HEAD of a POST-only fixed path, too; an id still reaches the order routes.
    const head = await http(`${svc.api}/orders/batch`, { method: 'HEAD' });
    expect([head.status, head.headers.get('allow')]).toEqual([405, 'POST']);
    const unknown = expectContractError(
      await http(`${svc.api}/orders/ord_00000000000000000000`, { headers: { 'x-api-key': t.key } }),
      404,
      'NOT_FOUND',
    );
    expect(unknown.message).toBe('No order ord_00000000000000000000');
  });

  it('413 PAYLOAD_TOO_LARGE above BODY_LIMIT_BYTES, declared or streamed', async () => {
    const big = JSON.stringify({ advance_seconds: 1, pad: 'x'.repeat(3000) });
    expectContractError(
      await clock({ headers: { 'content-type': 'application/json' }, body: big }),
      413,
      'PAYLOAD_TOO_LARGE',
    );

    // Chunked, with no Content-Length: the limit holds while the body streams in.
    const bytes = new TextEncoder().encode(big);
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < bytes.length; i += 500) c.enqueue(bytes.slice(i, i + 500));
        c.close();
      },
    });
    const streamed = await clock({
      headers: { 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expectContractError(streamed, 413, 'PAYLOAD_TOO_LARGE');

    // Just under the limit is fine (and reaches validation).
    const ok = JSON.stringify({ advance_seconds: 1, pad: 'x'.repeat(1500) });
    expectContractError(
      await clock({ headers: { 'content-type': 'application/json' }, body: ok }),
      400,
      'VALIDATION_FAILED',
    );
  });

  it('415 UNSUPPORTED_MEDIA_TYPE for any body that is not JSON', async () => {
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'application/xml',
      'multipart/form-data; boundary=x',
    ]) {
      const res = await clock({ headers: { 'content-type': type }, body: 'advance_seconds=1' });
      expectContractError(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
    }
  });

  it('400 BAD_REQUEST for a URL with broken percent-encoding (the router never sees it)', async () => {
    const res = await http(`${svc.api}/markets/%E0%A4%A`);
    const err = expectContractError(res, 400, 'BAD_REQUEST');
    expect(err.request_id).toMatch(/^req_/);
  });

  it('404 NOT_FOUND for a path parameter longer than any id', async () => {
    expectContractError(await http(`${svc.api}/markets/mkt_${'a'.repeat(200)}`), 404, 'NOT_FOUND');
  });

  it('malformed HTTP and oversized headers still get the contract body and headers', async () => {
    const garbage = await rawRequest(svc.baseUrl, 'NOT HTTP AT ALL\r\n\r\n');
    expect(garbage.status).toBe(400);
    expect(garbage.headers['svc-api-version']).toBe('v1');
    const body = JSON.parse(garbage.body);
    expect(body).toEqual({
      error: {
        code: 'BAD_REQUEST',
        message: expect.any(String),
        status: 400,
        request_id: garbage.headers['x-request-id'],
        details: {},
      },
    });

    const huge = await rawRequest(
      svc.baseUrl,
      `GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-Filler: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    expect(huge.status).toBe(431);
    expect(huge.headers['svc-api-version']).toBe('v1');
    const hugeBody = JSON.parse(huge.body);
    expect(hugeBody.error).toMatchObject({ code: 'HEADERS_TOO_LARGE', status: 431 });
    expect(hugeBody.error.request_id).toBe(huge.headers['x-request-id']);
  });

  it('what Node would answer bare (no Host, an odd Expect, CONNECT) gets the contract body', async () => {
    const contract = (
      r: { status: number; headers: Record<string, string>; body: string },
      code: string,
    ) => {
      expect(r.headers['svc-api-version']).toBe('v1');
      expect(r.headers['content-type']).toContain('application/json');
      const b = JSON.parse(r.body);
      expect(b.error).toMatchObject({
        code,
        status: r.status,
        request_id: r.headers['x-request-id'],
      });
      return b.error;
    };
    const noHost = await rawRequest(svc.baseUrl, 'GET /api/v1/health HTTP/1.1\r\n\r\n');
    expect(noHost.status).toBe(400);
    expect(contract(noHost, 'BAD_REQUEST').message).toContain('Host');
    // HTTP/1.0 needs no Host.
    const old = await rawRequest(svc.baseUrl, 'GET /api/v1/health HTTP/1.0\r\n\r\n');
    expect(old.status).toBe(200);
    // RFC 9112 3.2: more than one Host, or a Host that is not a host, is 400; so is a version
    // other than HTTP/1.0 and 1.1.
    for (const [head, why] of [
      ['GET /api/v1/health HTTP/1.1\r\nHost: a.example\r\nHost: b.example', 'one Host'],
      ['GET /api/v1/health HTTP/1.1\r\nHost: a b/c', 'Invalid Host'],
      ['GET /api/v1/health HTTP/2.0\r\nHost: x', 'HTTP/2.0'],
      ['GET /api/v1/health', 'HTTP/'],
    ]) {
      const bad = await rawRequest(svc.baseUrl, `${head}\r\n\r\n`);
      expect({ head, status: bad.status }).toEqual({ head, status: 400 });
      expect(contract(bad, 'BAD_REQUEST').message).toContain(why);
    }
    for (const host of [
      '127.0.0.1:3000',
      '[::1]:8080',
      '[fe80::fc:ff:fe00:1%eth0]:4778',
      '[fe80::1%25eth0]',
      '[v1.fe]',
      'api.example',
      'API.Example.:443',
      'xn--bcher-kva.example',
      '',
    ]) {
      const ok = await rawRequest(
        svc.baseUrl,
        `GET /api/v1/health HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
      );
      expect({ host, status: ok.status }).toEqual({ host, status: 200 });
    }

    // The caller's X-Request-Id is kept, as on every other answer.
    const expectation = await rawRequest(
      svc.baseUrl,
      'POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nExpect: bogus\r\nX-Request-Id: trace-417-abc\r\nContent-Length: 2\r\n\r\n{}',
    );
    expect(expectation.status).toBe(417);
    contract(expectation, 'EXPECTATION_FAILED');
    expect(expectation.headers['x-request-id']).toBe('trace-417-abc');

    const tunnel = await rawRequest(
      svc.baseUrl,
      'CONNECT /api/v1/orders HTTP/1.1\r\nHost: x\r\nX-Request-Id: trace-connect-1\r\n\r\n',
    );
    expect(tunnel.status).toBe(405);
    const refused = contract(tunnel, 'METHOD_NOT_ALLOWED');
    expect(tunnel.headers['x-request-id']).toBe('trace-connect-1');
    expect(refused.details.allowed_methods.join(', ')).toBe(tunnel.headers.allow);
  });

  it('a refused WebSocket handshake gets the contract body, not text/html', async () => {
    const hs = (method: string, headers: string) =>
      rawRequest(
        svc.baseUrl,
        `${method} /api/v1/ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n${headers}\r\n`,
      );
    const key = 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n';
    const cases: [string, string, number, string, string][] = [
      ['GET', 'Sec-WebSocket-Version: 13\r\n', 400, 'BAD_REQUEST', 'Sec-WebSocket-Key'],
      [
        'GET',
        `Sec-WebSocket-Key: short==\r\nSec-WebSocket-Version: 13\r\n`,
        400,
        'BAD_REQUEST',
        'Sec-WebSocket-Key',
      ],
      ['GET', `${key}Sec-WebSocket-Version: abc\r\n`, 400, 'BAD_REQUEST', 'Sec-WebSocket-Version'],
      ['GET', key, 400, 'BAD_REQUEST', 'Sec-WebSocket-Version'],
      ['POST', `${key}Sec-WebSocket-Version: 13\r\n`, 405, 'METHOD_NOT_ALLOWED', 'GET'],
    ];
    for (const [method, headers, status, code, mention] of cases) {
      const r = await hs(method, headers);
      expect(r.status).toBe(status);
      expect(r.headers['content-type']).toContain('application/json');
      expect(r.headers['svc-api-version']).toBe('v1');
      const err = JSON.parse(r.body).error;
      expect(err).toMatchObject({ code, status, request_id: r.headers['x-request-id'] });
      expect(err.message).toContain(mention);
    }
    expect((await hs('POST', `${key}Sec-WebSocket-Version: 13\r\n`)).headers.allow).toBe(
      'GET, HEAD',
    );
    const traced = await hs('GET', `X-Request-Id: trace-ws-0001\r\n${key}`);
    expect(traced.headers['x-request-id']).toBe('trace-ws-0001');
    const noHost = await rawRequest(
      svc.baseUrl,
      `GET /api/v1/ws HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n${key}Sec-WebSocket-Version: 13\r\n\r\n`,
    );
    expect(noHost.status).toBe(400);
    expect(JSON.parse(noHost.body).error.message).toContain('Host');
    expect(
      (await hs('GET', `${key}Sec-WebSocket-Version: 7\r\n`)).headers['sec-websocket-version'],
    ).toBe('13, 8');
    // A well-formed handshake still upgrades.
    const client = await WsClient.connect(svc.baseUrl);
    expect(client.closed).toBeNull();
    await client.close();

    // The endpoint asked for no WebSocket (no Upgrade, another protocol, HTTP/1.0): a refused
    // handshake, 400; another method without an upgrade: 405 as on any known path.
    const plain = (head: string) => rawRequest(svc.baseUrl, `${head}\r\nConnection: close\r\n\r\n`);
    for (const head of [
      'GET /api/v1/ws HTTP/1.1\r\nHost: x',
      `GET /api/v1/ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: h2c`,
      `GET /api/v1/ws HTTP/1.0\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n${key}Sec-WebSocket-Version: 13`,
    ]) {
      const r = await plain(head);
      expect({ head, status: r.status }).toEqual({ head, status: 400 });
      expect(JSON.parse(r.body).error).toMatchObject({
        code: 'BAD_REQUEST',
        request_id: r.headers['x-request-id'],
      });
      expect(r.headers['svc-api-version']).toBe('v1');
    }
    const post = await plain('POST /api/v1/ws HTTP/1.1\r\nHost: x\r\nContent-Length: 0');
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');

    // The 101 answer carries the caller's X-Request-Id and Svc-API-Version like any response.
    const upgraded = await new Promise<IncomingHttpHeaders>((resolve, reject) => {
      const req = httpRequest(`${svc.baseUrl}/api/v1/ws`, {
        headers: {
          Connection: 'Upgrade',
          Upgrade: 'websocket',
          'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
          'Sec-WebSocket-Version': '13',
          'X-Request-Id': 'trace-ws-101-ok',
        },
      });
      req.on('upgrade', (res, socket) => {
        socket.destroy();
        resolve(res.headers);
      });
      req.on('response', (res) => reject(new Error(`no upgrade: ${res.statusCode}`)));
      req.on('error', reject);
      req.end();
    });
    expect(upgraded['svc-api-version']).toBe('v1');
    expect(upgraded['x-request-id']).toBe('trace-ws-101-ok');
  });

  it('echoes a well-formed caller X-Request-Id and replaces a malformed one', async () => {
    const mine = 'client-trace_0001:abc.DEF';
    const ok = await http(`${svc.api}/health`, { headers: { 'x-request-id': mine } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-request-id')).toBe(mine);

    const err = await http(`${svc.api}/nope`, { headers: { 'x-request-id': mine } });
    expect(expectContractError(err, 404, 'NOT_FOUND').request_id).toBe(mine);

    for (const bad of ['short', 'has space in it', 'x'.repeat(65), 'semi;colon;id', '<script>']) {
      const res = await http(`${svc.api}/nope`, { headers: { 'x-request-id': bad } });
      const e = expectContractError(res, 404, 'NOT_FOUND');
      expect(e.request_id).not.toBe(bad);
      expect(e.request_id).toMatch(/^req_[A-Za-z0-9_-]{16}$/);
    }

    const a = await http(`${svc.api}/health`);
    const b = await http(`${svc.api}/health`);
    expect(a.headers.get('x-request-id')).not.toBe(b.headers.get('x-request-id'));
  });

  it('no request, however odd, gets a stack trace, a 5xx or a body outside the contract', async () => {
    const segment = fc.constantFrom(
      'api',
      'v1',
      'markets',
      'sandbox',
      'clock',
      'openapi',
      'v1.json',
      'openapi.json',
      'health',
      'ready',
      'changelog',
      'changelog.rss',
      'mkt_0123456789abcdef0123',
      'disputes',
      'admin',
      '%2e%2e',
      '%00',
      '%E0%A4%A',
      '%ZZ',
      '*',
      '::',
      '~',
      'x'.repeat(150),
    );
    const request = fc.record({
      method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'),
      path: fc.array(segment, { maxLength: 5 }).map((s) => `/${s.join('/')}`),
      query: fc.constantFrom(
        '',
        '?limit=0',
        '?limit=abc',
        '?limit=1&limit=2',
        '?cursor=zz',
        '?cursor=WyJhIl0',
        '?status=OPEN&category=CRYPTO',
        '?__proto__[admin]=1',
        '?a=%ZZ',
      ),
      contentType: fc.constantFrom(
        undefined,
        'application/json',
        'application/json; charset=utf-8',
        'application/vnd.api+json',
        'text/plain',
        'application/x-www-form-urlencoded',
        '',
        'garbage',
      ),
      body: fc.oneof(
        fc.constant(undefined),
        fc.json(),
        fc.string({ maxLength: 40 }),
        fc.constant('{"advance_seconds":1}'),
        fc.constant('{"constructor":{"prototype":{"admin":true}}}'),
        fc.constant('{"advance_seconds":1e400}'),
      ),
    });
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const hasBody = r.body !== undefined && r.method !== 'GET' && r.method !== 'HEAD';
        const headers: Record<string, string> = {};
        if (r.contentType !== undefined) headers['content-type'] = r.contentType;
        const res: JsonResponse = await http(`${svc.baseUrl}${r.path}${r.query}`, {
          method: r.method,
          headers,
          body: hasBody ? r.body : undefined,
        });
        expect(res.status).toBeLessThan(500);
        expect(res.headers.get('svc-api-version')).toBe('v1');
        expect(res.headers.get('x-request-id')).toMatch(/^req_/);
        expectNoLeak(res.text);
        if (res.status >= 400 && r.method !== 'HEAD') {
          expectContractError(res, res.status, res.body?.error?.code);
        }
      }),
      { numRuns: 300 },
    );
    // Nothing along the way was an unexpected (logged-as-error) failure.
    expect(logLines(svc).filter((l) => Number(l.level) >= 50)).toEqual([]);
  });
});

/**
 * One app for the describes below that take the default body limit and read back only what they
 * sent (and that no request of theirs was logged as an error): the clock route on (a deeply nested
 * body to it), the rate limits off (bursts of bodies). The 500 and the 408 cases boot their own.
 */
let lenient: Running;
beforeAll(async () => {
  lenient = await startApp({
    env: { SANDBOX_CLOCK_CONTROL: 'true', RATE_LIMITS_ENABLED: 'false' },
  });
});
afterAll(async () => {
  await lenient.close();
});

describe('error model: deeply nested JSON', () => {
  let svc: Running;
  beforeAll(() => {
    svc = lenient;
  });

  it('a body nested deeper than 32 levels is 400 MALFORMED_JSON, never a stack overflow (500)', async () => {
    for (const depth of [33, 1_500, 100_000]) {
      for (const path of ['/auth/login', '/sandbox/clock']) {
        const body = `{"advance_seconds":1,"email":"a@b.c","x":${'['.repeat(depth)}${']'.repeat(depth)}}`;
        const res = await http(`${svc.api}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        });
        const err = expectContractError(res, 400, 'MALFORMED_JSON');
        expect(err.message).toContain('32 levels');
      }
    }
    // 32 levels are fine, and brackets inside strings do not count.
    const ok = await http(`${svc.api}/sandbox/clock`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"advance_seconds":1,"note":"${'['.repeat(100)}","x":${'['.repeat(31)}${']'.repeat(31)}}`,
    });
    expect(ok.status).not.toBe(500);
    expect(ok.body?.error?.code).not.toBe('MALFORMED_JSON');
    expect(logLines(svc).filter((l) => Number(l.level) >= 50)).toEqual([]);
  });
});

describe('error model: bodies JSON allows but no operation takes', () => {
  let svc: Running;
  let key: string;
  beforeAll(async () => {
    svc = lenient;
    key = (await trader(svc)).key;
  });

  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    http(`${svc.api}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });

  it('an unpaired surrogate escape in a string or a key is 400 VALIDATION_FAILED naming it (was 500)', async () => {
    const login = expectContractError(
      await post('/auth/login', '{"email":"\\ud800","password":"x"}'),
      400,
      'VALIDATION_FAILED',
    );
    expect(login.details.fields).toEqual([
      { field: 'email', message: expect.stringContaining('surrogate') },
    ]);
    expectContractError(
      await post('/auth/register', '{"email":"a\\udc00@b.test","password":"long-enough-password"}'),
      400,
      'VALIDATION_FAILED',
    );
    const order = expectContractError(
      await post(
        '/orders',
        JSON.stringify({
          market_id: 'mkt_x',
          action: 'BUY',
          side: 'YES',
          type: 'LIMIT',
          price: 5,
          quantity: 1,
        }).replace('}', ',"client_order_id":"x\\udbff"}'),
        { 'x-api-key': key },
      ),
      400,
      'VALIDATION_FAILED',
    );
    expect(order.details.fields[0].field).toBe('client_order_id');
    // Checked with the other field rules, after the credential: anonymous, it is 401.
    expectContractError(await post('/orders', '{"market_id":"\\ud800"}'), 401, 'UNAUTHENTICATED');
    const inKey = expectContractError(
      await post('/auth/login', '{"email":"a@b.test","password":"x","\\ud83d":1}'),
      400,
      'VALIDATION_FAILED',
    );
    expect(inKey.details.fields[0].field).toBe('\ud83d');
    // A paired surrogate (an emoji) is ordinary text.
    const emoji = await post('/auth/login', '{"email":"\\ud83d\\ude00@b.test","password":"x"}');
    expect(emoji.body.error.details?.fields?.[0]?.message ?? '').not.toContain('surrogate');
    expect(logLines(svc).filter((l) => Number(l.level) >= 50)).toEqual([]);
  });

  it('a body of more than 2,000 values is 413 before validation or authentication; error lists stop at 20 fields', async () => {
    // 300,000 empty legs (900 KB): answered at once, in a short body (was 87 MB after seconds).
    const legs = await post('/orders/batch', `{"orders":[${Array(300_000).fill('{}').join(',')}]}`);
    const err = expectContractError(legs, 413, 'PAYLOAD_TOO_LARGE');
    expect(err.details).toEqual({ max_values: 2000 });
    expect(legs.text.length).toBeLessThan(1000);
    const keys = Object.fromEntries(Array.from({ length: 75_000 }, (_, i) => [`k${i}`, 1]));
    expectContractError(
      await post('/auth/register', JSON.stringify(keys)),
      413,
      'PAYLOAD_TOO_LARGE',
    );
    // Under the cap, a body of unknown keys lists 20 of them and counts the rest.
    const some = Object.fromEntries(Array.from({ length: 1500 }, (_, i) => [`k${i}`, 1]));
    const many = expectContractError(
      await post(
        '/auth/register',
        JSON.stringify({ email: 'x@y.test', password: 'long-enough-password', ...some }),
      ),
      400,
      'VALIDATION_FAILED',
    );
    expect(many.details.fields).toHaveLength(20);
    expect(many.details.fields_omitted).toBe(1480);
    // The same for the schema-validated order routes (authenticated).
    const legsUnder = await post(
      '/orders',
      JSON.stringify(Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`extra${i}`, 1]))),
      { 'x-api-key': key },
    );
    const schema = expectContractError(legsUnder, 400, 'VALIDATION_FAILED');
    expect(schema.details.fields).toHaveLength(20);
    expect(schema.details.fields_omitted).toBeGreaterThan(0);
  });

  it('a schema-validated route authenticates first: an anonymous malformed order is 401, not 400', async () => {
    for (const path of ['/orders', '/orders/quote', '/orders/batch']) {
      expectContractError(await post(path, '{"orders":[{}],"price":"x"}'), 401, 'UNAUTHENTICATED');
    }
    expectContractError(
      await post('/orders', '{"price":"x"}', {
        'x-api-key': 'svc_test_not_a_real_key_at_all_000000',
      }),
      401,
      'UNAUTHENTICATED',
    );
  });

  it('the same email registered concurrently: one 201, the others 409 EMAIL_TAKEN (was 500)', async () => {
    const body = JSON.stringify({
      email: `race-${process.pid}@errors.test`,
      password: 'long-enough-password',
    });
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => post('/auth/register', body)),
    );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    for (const a of answers.filter((x) => x.status !== 201)) {
      expectContractError(a, 409, 'EMAIL_TAKEN');
    }
    expect(logLines(svc).filter((l) => Number(l.level) >= 50)).toEqual([]);
  });
});

describe('error model: 500 INTERNAL', () => {
  let svc: Running;
  beforeAll(async () => {
    svc = await startApp();
  });
  afterAll(async () => {
    await svc.close();
  });

  it('an unexpected failure answers 500 INTERNAL with nothing internal, logged with its request id', async () => {
    // Break the live engine's database under the running app.
    const db = openDatabaseOf(svc.dataDir, 'live');
    db.exec('ALTER TABLE markets RENAME TO markets_broken_by_test');
    db.close();

    const reqId = 'internal-failure-0001';
    const res = await http(`${svc.api}/markets`, { headers: { 'x-request-id': reqId } });
    const err = expectContractError(res, 500, 'INTERNAL');
    expect(err.request_id).toBe(reqId);
    expect(err.details).toEqual({});
    expectNoLeak(res.text);
    for (const internal of [
      'markets',
      'markets_broken_by_test',
      'no such table',
      'at ',
      'Error:',
    ]) {
      expect(res.text).not.toContain(internal);
    }

    const byId = await http(`${svc.api}/markets/mkt_0123456789abcdef0123`);
    expectContractError(byId, 500, 'INTERNAL');
    expectNoLeak(byId.text);

    // The failure is in the logs, at error level, with the request id, method and route.
    const lines = logLines(svc).filter((l) => l.req_id === reqId);
    const errorLine = lines.find((l) => l.level === 50);
    expect(errorLine).toMatchObject({ method: 'GET', route: '/api/v1/markets' });
    // The engine's own words for the missing table.
    expect(JSON.stringify(errorLine)).toContain(
      testDatabaseIsPostgres() ? 'does not exist' : 'no such table',
    );
    expect(lines.find((l) => l.msg === 'request')).toMatchObject({ status: 500 });
  });
});

/** A request that asks to upgrade the connection to anything but the realtime WebSocket. */
describe('HTTP requests carrying an Upgrade header (curl --http2, Java HttpClient)', () => {
  let svc: Running;
  beforeAll(() => {
    svc = lenient;
  });

  async function raw(request: string): Promise<string> {
    const sock = connect({ host: '127.0.0.1', port: Number(new URL(svc.baseUrl).port) });
    let out = '';
    sock.on('data', (c: Buffer) => (out += c.toString()));
    await new Promise<void>((r) => sock.once('connect', () => r()));
    sock.write(request);
    await new Promise<void>((r) => sock.once('close', () => r()));
    return out;
  }

  it('Upgrade: h2c is ignored: the request is answered as HTTP/1.1, with the usual headers', async () => {
    const out = await raw(
      'GET /api/v1/markets?limit=1 HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\n' +
        'Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n',
    );
    const [head, body] = out.split('\r\n\r\n');
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
    expect(head).toMatch(/\r\nx-request-id: req_/i);
    expect(head).toMatch(/\r\nsvc-api-version: v1/i);
    expect(JSON.parse(body).data).toHaveLength(1);
    // Unknown paths still answer the contract's 404; a WebSocket upgrade elsewhere is no upgrade.
    const missing = await raw(
      'GET /api/v1/nope HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n',
    );
    expect(missing.split('\r\n')[0]).toBe('HTTP/1.1 404 Not Found');
    expect(JSON.parse(missing.split('\r\n\r\n')[1]).error.code).toBe('NOT_FOUND');
  });

  it('one with a body is refused with 400 in the contract body (its body can no longer be read)', async () => {
    const body = '{"email":"a@b.c","password":"x"}';
    const out = await raw(
      `POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    const [head, text] = out.split('\r\n\r\n');
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
    const err = JSON.parse(text).error;
    expect(err).toMatchObject({ code: 'BAD_REQUEST', status: 400 });
    expect(err.request_id).toMatch(/^req_/);
  });
});

describe('error model: a request that stalls is answered 408', () => {
  let svc: Running;
  beforeAll(async () => {
    svc = await startApp({ env: { REQUEST_TIMEOUT_MS: '1000' } });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('a body that stops arriving gets 408 REQUEST_TIMEOUT and the connection is closed', async () => {
    const started = Date.now();
    const stalled = await rawRequest(
      svc.baseUrl,
      'POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
        'Content-Length: 100\r\nX-Request-Id: trace-stalled-1\r\n\r\n{"a',
      20_000,
    );
    expect(stalled.status).toBe(408);
    // 1 s, checked every second: the configured REQUEST_TIMEOUT_MS, not the 30 s default (the
    // bound leaves a loaded machine room, and still fails if the setting were ignored).
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(stalled.headers['svc-api-version']).toBe('v1');
    // The caller's id is kept (the request's headers had arrived), and the timeout is logged.
    expect(stalled.headers['x-request-id']).toBe('trace-stalled-1');
    expect(JSON.parse(stalled.body).error).toMatchObject({
      code: 'REQUEST_TIMEOUT',
      status: 408,
      request_id: 'trace-stalled-1',
    });
    expect(logLines(svc).some((l) => l.req_id === 'trace-stalled-1' && l.status === 408)).toBe(
      true,
    );
    // A request refused before its body arrived gets that one answer, never a 408 after it (a
    // keep-alive client would read the 408 as the answer to its next request).
    const refusedEarly = await rawRequest(
      svc.baseUrl,
      'PATCH /api/v1/orders/export HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
        'Content-Length: 100\r\n\r\n{"a":',
    );
    expect(refusedEarly.status).toBe(405);
    expect(refusedEarly.raw.match(/HTTP\/1\.1 \d{3}/g)).toEqual(['HTTP/1.1 405']);
    // Refusals of whole requests keep the connection alive (one socket for all of them).
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    let sockets = 0;
    agent.on('free', () => undefined);
    const create = agent.createConnection.bind(agent);
    agent.createConnection = ((...args: Parameters<typeof create>) => {
      sockets++;
      return create(...args);
    }) as typeof agent.createConnection;
    const send = (method: string, path: string) =>
      new Promise<[number, string | undefined]>((resolve, reject) => {
        const r = httpRequest(`${svc.baseUrl}${path}`, {
          method,
          agent,
          headers: { 'content-type': 'application/json', 'x-api-key': 'svc_test_bad' },
        });
        r.on('response', (res) => {
          res.resume();
          res.on('end', () => resolve([res.statusCode ?? 0, res.headers.connection]));
        });
        r.on('error', reject);
        r.end('{"price":50}');
      });
    for (let i = 0; i < 5; i++) {
      expect(await send('PATCH', '/api/v1/orders/export')).toEqual([405, 'keep-alive']);
      expect(await send('POST', '/api/v1/orders')).toEqual([401, 'keep-alive']);
    }
    expect(sockets).toBe(1);
    agent.destroy();
    // Headers that stop arriving too.
    const headers = await rawRequest(
      svc.baseUrl,
      'GET /api/v1/health HTTP/1.1\r\nHost: x\r\n',
      20_000,
    );
    expect(headers.status).toBe(408);
  });
});
