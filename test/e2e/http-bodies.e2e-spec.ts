import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { EngineRegistry } from '../../src/modules/trading/engine-registry.js';
import { expectContractError, http, rawRequest, type Running } from '../support/harness.js';
import {
  allOrders,
  as,
  limit,
  place,
  startOrdersApp,
  TRADABLE,
  trader,
  type Trader,
} from '../support/orders.js';

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Writes `payload` in one write on a fresh connection and reads every response until the server
 * closes it (responses with a Content-Length, as this API's JSON answers have).
 */
function pipelined(svc: Running, payload: string): Promise<Answer[]> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const sock = connect({ host: '127.0.0.1', port: Number(new URL(svc.baseUrl).port) }, () =>
      sock.write(payload),
    );
    sock.setTimeout(5000, () => sock.destroy(new Error('no close within 5 s')));
    sock.on('data', (c: Buffer) => chunks.push(c));
    sock.on('error', reject);
    sock.on('close', () => {
      let raw = Buffer.concat(chunks).toString('utf8');
      const out: Answer[] = [];
      while (raw.length > 0) {
        const sep = raw.indexOf('\r\n\r\n');
        if (sep < 0) break;
        const [statusLine, ...lines] = raw.slice(0, sep).split('\r\n');
        const headers: Record<string, string> = {};
        for (const l of lines) {
          const i = l.indexOf(':');
          headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
        }
        const length = Number(headers['content-length'] ?? 0);
        out.push({
          status: Number(statusLine.split(' ')[1]),
          headers,
          body: raw.slice(sep + 4, sep + 4 + length),
        });
        raw = raw.slice(sep + 4 + length);
      }
      resolve(out);
    });
  });
}

describe('HTTP: bodies, encodings and pipelined requests', () => {
  let svc: Running;
  let t: Trader;
  const m = TRADABLE[0];

  beforeAll(async () => {
    svc = await startOrdersApp();
    t = await trader(svc);
  });
  afterAll(async () => {
    await svc.close();
  });

  const post = (path: string, headers: Record<string, string>, body?: string | Buffer) =>
    http(`${svc.api}${path}`, {
      method: 'POST',
      headers: { 'x-api-key': t.key, ...headers },
      body,
    });

  it('requests pipelined before a malformed one are answered first, in order; then the 400', async () => {
    const order = JSON.stringify(limit(m, 'BUY', 'YES', 2, 1, { client_order_id: 'pipelined' }));
    const answers = await pipelined(
      svc,
      `POST /api/v1/orders HTTP/1.1\r\nHost: x\r\nx-api-key: ${t.key}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(order)}\r\n\r\n${order}` +
        'GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n' +
        'GET /api/v1/health HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n',
    );
    // The order was placed: its 201 must not be lost to the 400 that follows it.
    expect(answers.map((a) => a.status)).toEqual([201, 200, 400]);
    const placed = JSON.parse(answers[0].body);
    expect(placed.client_order_id).toBe('pipelined');
    expect(JSON.parse(answers[2].body).error.code).toBe('BAD_REQUEST');
    expect(answers[2].headers.connection).toBe('close');
    const mine = await allOrders(svc, t);
    expect(mine.map((o) => o.id)).toContain(placed.id);
    await as(t, `${svc.api}/orders/${placed.id}`, { method: 'DELETE' });

    const healthTwice = await pipelined(
      svc,
      'GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\nGET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n' +
        'GARBAGE\r\n\r\n',
    );
    expect(healthTwice.map((a) => a.status)).toEqual([200, 200, 400]);
  });

  it('requests pipelined behind an answer that closes the connection are not run (never answered)', async () => {
    const orderBody = (cid: string) =>
      JSON.stringify(limit(m, 'BUY', 'YES', 2, 1, { client_order_id: cid }));
    const orderAfter = (cid: string) =>
      `POST /api/v1/orders HTTP/1.1\r\nHost: x\r\nx-api-key: ${t.key}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(orderBody(cid))}\r\n\r\n${orderBody(cid)}`;
    const closers: [string, number][] = [
      ['GET /api/v1/health HTTP/1.1\r\n\r\n', 400], // no Host
      ['GET /api/v1/health HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n', 400],
      [
        'POST /api/v1/orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json; charset=latin1\r\nContent-Length: 2\r\n\r\n{}',
        415,
      ],
      [
        'POST /api/v1/orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: 2\r\n\r\n{}',
        415,
      ],
      ['GET /api/v1/health HTTP/1.1\r\nHost: x\r\nExpect: foo\r\n\r\n', 417],
    ];
    for (const [i, [closer, status]] of closers.entries()) {
      const cid = `behind-close-${i}`;
      const answers = await pipelined(svc, closer + orderAfter(cid) + orderAfter(`${cid}-b`));
      expect([i, answers.map((a) => a.status)]).toEqual([i, [status]]);
      const placed = (await allOrders(svc, t)).map((o) => o.client_order_id);
      expect([i, placed.filter((c: string) => c.startsWith(cid))]).toEqual([i, []]);
    }
    // A transfer coding that does not end with chunked leaves the length unknown: 400, and the
    // request behind it (which would have been read as its body) is not run.
    const te = await pipelined(
      svc,
      'GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n' +
        'GET /api/v1/health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n' +
        orderAfter('behind-te'),
    );
    expect(te.map((a) => a.status)).toEqual([200, 400]);
    expect((await allOrders(svc, t)).some((o) => o.client_order_id === 'behind-te')).toBe(false);
  });

  it('an upgrade, a refused handshake or CONNECT pipelined after a request waits for its answer', async () => {
    // Upgrade: h2c handed the socket on while the first answer held it: the process stopped.
    const h2c = await pipelined(
      svc,
      'GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n' +
        'GET /api/v1/health HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n',
    );
    expect(h2c.map((a) => a.status)).toEqual([200, 200]);
    // Bytes after an h2c request without a length are the next request, not a body: the h2c one
    // is answered as HTTP, the one behind it (unread once the socket is handed over) is not run.
    const behind = await pipelined(
      svc,
      'GET /api/v1/health HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n' +
        'GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n',
    );
    expect(behind.map((a) => a.status)).toEqual([200]);
    for (const second of [
      'POST /api/v1/ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n',
      'CONNECT a.example:443 HTTP/1.1\r\nHost: a.example:443\r\n\r\n',
    ]) {
      const answers = await pipelined(
        svc,
        'GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n' + second,
      );
      expect(answers.map((a) => a.status)).toEqual([200, 405]);
    }
    expect((await http(`${svc.api}/health`)).status).toBe(200);
  });

  it('a request without a body is one, whatever Content-Type it names (fetch, curl -d "", SDKs)', async () => {
    await as(t, `${svc.api}/orders/cancel-all`, { method: 'POST' });
    const resting = await place(svc, t, limit(m, 'BUY', 'YES', 3, 1));
    // fetch sends text/plain;charset=UTF-8 with an empty body: was 415.
    const plain = await post(
      '/orders/cancel-all',
      { 'content-type': 'text/plain;charset=UTF-8' },
      '',
    );
    expect(plain.status).toBe(200);
    expect(plain.body.cancelled).toBe(1);
    expect(
      (
        await post(
          '/orders/cancel-all',
          { 'content-type': 'application/x-www-form-urlencoded' },
          '',
        )
      ).status,
    ).toBe(200);
    // application/json with no body: was 400 MALFORMED_JSON.
    const again = await place(svc, t, limit(m, 'BUY', 'YES', 3, 1));
    const del = await http(`${svc.api}/orders/${again.id}`, {
      method: 'DELETE',
      headers: { 'x-api-key': t.key, 'content-type': 'application/json' },
    });
    expect(del.status).toBe(200);
    expect(del.body.status).toBe('CANCELLED');
    expect(resting.id).not.toBe(again.id);
    // An operation that needs a body says so as a validation error.
    const none = expectContractError(
      await post('/orders', { 'content-type': 'application/json' }, ''),
      400,
      'VALIDATION_FAILED',
    );
    expect(none.message.length).toBeGreaterThan(0);
  });

  it('a body that is not UTF-8 JSON is refused, never stored with U+FFFD in it', async () => {
    const bytes = Buffer.concat([
      Buffer.from('{"name":"a'),
      Buffer.from([0xff]),
      Buffer.from('b","environment":"test"}'),
    ]);
    const session = { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' };
    const bad = await http(`${svc.api}/api-keys`, {
      method: 'POST',
      headers: session,
      body: bytes,
    });
    const err = expectContractError(bad, 400, 'MALFORMED_JSON');
    expect(err.message).toMatch(/UTF-8/);
    // A declared charset other than UTF-8 is 415 (its bytes would be misread).
    const latin1 = await http(`${svc.api}/api-keys`, {
      method: 'POST',
      headers: { ...session, 'content-type': 'application/json; charset=iso-8859-1' },
      body: Buffer.from('{"name":"caf\xe9","environment":"test"}', 'latin1'),
    });
    expect(expectContractError(latin1, 415, 'UNSUPPORTED_MEDIA_TYPE').message).toMatch(
      /charset iso-8859-1/,
    );
    // UTF-8 in any spelling, and no charset, are taken.
    for (const type of [
      'application/json; charset=utf-8',
      'Application/JSON;charset="UTF-8"',
      'application/json',
    ]) {
      const ok = await http(`${svc.api}/api-keys`, {
        method: 'POST',
        headers: { ...session, 'content-type': type },
        body: Buffer.from('{"name":"café ✓","environment":"test"}'),
      });
      expect(ok.status).toBe(201);
      expect(ok.body.name).toBe('café ✓');
    }
  });

  it('a compressed body is 415 naming the encoding taken; another transfer coding is 400', async () => {
    const order = JSON.stringify(limit(m, 'BUY', 'YES', 2, 1));
    for (const encoding of ['gzip', 'br', 'zstd', 'bogus']) {
      const res = await post(
        '/orders',
        { 'content-type': 'application/json', 'content-encoding': encoding },
        encoding === 'gzip' ? gzipSync(order) : order,
      );
      const err = expectContractError(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
      expect(err.message).toMatch(/Content-Encoding/);
      expect(err.details).toEqual({ accepted_encodings: ['identity'] });
      expect(res.headers.get('accept-encoding')).toBe('identity');
    }
    const identity = await post(
      '/orders',
      { 'content-type': 'application/json', 'content-encoding': 'identity' },
      order,
    );
    expect(identity.status).toBe(201);
    await as(t, `${svc.api}/orders/${identity.body.id}`, { method: 'DELETE' });
    const gz = gzipSync(order);
    const chunked = await rawRequest(
      svc.baseUrl,
      Buffer.concat([
        Buffer.from(
          `POST /api/v1/orders HTTP/1.1\r\nHost: x\r\nx-api-key: ${t.key}\r\n` +
            `Content-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\n\r\n` +
            `${gz.length.toString(16)}\r\n`,
        ),
        gz,
        Buffer.from('\r\n0\r\n\r\n'),
      ]),
    );
    expect(chunked.status).toBe(400);
    expect(JSON.parse(chunked.body).error.message).toMatch(/Transfer-Encoding gzip, chunked/);
    // Nothing was placed by any of them.
    expect((await allOrders(svc, t, '?status=OPEN')).length).toBe(0);
  });

  it('only application/json is read: other +json types are 415, not misread', async () => {
    for (const type of [
      'application/merge-patch+json',
      'application/json-patch+json',
      'application/vnd.api+json',
    ]) {
      const res = await post(
        '/orders',
        { 'content-type': type },
        JSON.stringify(limit(m, 'BUY', 'YES', 2, 1)),
      );
      expectContractError(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
    }
  });

  it('answers are never cached: Cache-Control no-store, the contract no-cache with its ETag', async () => {
    const key = await http(`${svc.api}/api-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.token}` },
      json: { name: 'cache', environment: 'test' },
    });
    expect(key.status).toBe(201);
    expect(key.headers.get('cache-control')).toBe('no-store');
    expect((await as(t, `${svc.api}/wallet`)).headers.get('cache-control')).toBe('no-store');
    expect((await http(`${svc.api}/markets?limit=1`)).headers.get('cache-control')).toBe(
      'no-store',
    );
    const refused = await http(`${svc.api}/wallet`);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('cache-control')).toBe('no-store');
    // Refused before any hook ran (broken percent-encoding) or for a malformed Host: the same.
    for (const raw of [
      'GET /api/v1/%ZZ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
      'GET /api/v1/health HTTP/1.1\r\nHost: x\r\nHost: y\r\nConnection: close\r\n\r\n',
    ]) {
      const early = await rawRequest(svc.baseUrl, raw);
      expect(early.status).toBe(400);
      expect(early.headers['cache-control']).toBe('no-store');
    }
    const doc = await http(`${svc.api}/openapi/v1.json`);
    expect(doc.headers.get('cache-control')).toBe('no-cache');
    expect(doc.headers.get('etag')).toBeTruthy();
  });

  it('a 401 names the ways to authenticate (WWW-Authenticate, RFC 9110 15.5.2)', async () => {
    const tries: Record<string, string>[] = [
      {},
      { 'x-api-key': 'svc_test_nope' },
      { authorization: 'Bearer x' },
    ];
    for (const headers of tries) {
      const res = await http(`${svc.api}/auth/me`, { headers });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('ApiKey realm="api", Bearer realm="api"');
    }
    // Other refusals carry none.
    const forbidden = await as(t, `${svc.api}/webhooks`);
    expect(forbidden.status).toBe(403);
    expect(forbidden.headers.get('www-authenticate')).toBeNull();
  });

  it('HEAD answered 304 has no Content-Length (RFC 9110 8.6), as GET', async () => {
    const etag = (await http(`${svc.api}/openapi/v1.json`)).headers.get('etag')!;
    for (const method of ['GET', 'HEAD']) {
      const res = await rawRequest(
        svc.baseUrl,
        `${method} /api/v1/openapi/v1.json HTTP/1.1\r\nHost: x\r\nIf-None-Match: ${etag}\r\nConnection: close\r\n\r\n`,
      );
      expect(res.status).toBe(304);
      expect(res.headers['content-length']).toBeUndefined();
      expect(res.headers.etag).toBe(etag);
    }
  });

  it('answers written on the socket carry a Date, as every other answer (RFC 9110 6.6.1)', async () => {
    const res = await rawRequest(svc.baseUrl, 'GARBAGE\r\n\r\n');
    expect(res.status).toBe(400);
    expect(Number.isNaN(Date.parse(res.headers.date ?? ''))).toBe(false);
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('QUERY, which no route takes, is 404 or 405 like any such method, Content-Type or not', async () => {
    const unknown = await rawRequest(
      svc.baseUrl,
      'QUERY /api/v1/nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.body).error.code).toBe('NOT_FOUND');
    const known = await rawRequest(
      svc.baseUrl,
      'QUERY /api/v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    expect(known.status).toBe(405);
    expect(JSON.parse(known.body).error.code).toBe('METHOD_NOT_ALLOWED');
    expect(known.headers.allow).toMatch(/GET/);
    // Other refusals keep their own answer.
    const twoHosts = await rawRequest(
      svc.baseUrl,
      'QUERY /api/v1/markets HTTP/1.1\r\nHost: x\r\nHost: y\r\nConnection: close\r\n\r\n',
    );
    expect(twoHosts.status).toBe(400);
    expect(JSON.parse(twoHosts.body).error.message).toBe('A request takes one Host header');
  });

  it('an export whose read fails ends that export only; the service answers on', async () => {
    await place(svc, t, limit(m, 'BUY', 'YES', 2, 1));
    const reads = svc.app.get(EngineRegistry, { strict: false }).get('test').orderExports;
    const spy = jest.spyOn(reads, 'exportChunk').mockImplementationOnce(() => {
      throw new Error('disk I/O error');
    });
    const cut = await fetch(`${svc.api}/orders/export`, { headers: { 'x-api-key': t.key } })
      .then((r) => r.text())
      .then(
        () => 'complete',
        () => 'cut',
      );
    spy.mockRestore();
    expect(cut).toBe('cut');
    expect((await http(`${svc.api}/health`)).status).toBe(200);
    const whole = await as(t, `${svc.api}/orders/export`);
    expect(whole.status).toBe(200);
    // Zone-less times would be read in the server's time zone: refused.
    const zoneless = expectContractError(
      await as(t, `${svc.api}/orders/export?created_from=2026-11-22T15:46`),
      400,
      'VALIDATION_FAILED',
    );
    expect(JSON.stringify(zoneless.details)).toMatch(/created_from must be an ISO 8601 date/);
    // Finer than a millisecond rounds up (times are stored to the millisecond).
    const last = (await allOrders(svc, t))[0];
    const at = String(last.created_at).replace('Z', '');
    const window = async (q: string) =>
      (await as(t, `${svc.api}/orders/export?${q}`)).text.includes(String(last.id));
    expect(await window(`created_to=${at}999Z`)).toBe(true);
    expect(await window(`created_from=${at}1Z`)).toBe(false);
    expect(await window(`created_from=${at}000Z`)).toBe(true);
    expectContractError(
      await as(t, `${svc.api}/orders/export?created_from=2026-11-23&created_to=2026-11-22`),
      400,
      'VALIDATION_FAILED',
    );
    for (const ok of ['2026-11-22', '2026-11-22T15:46:00Z', '2026-11-22T15:46:00.5+02:00']) {
      expect(
        (await as(t, `${svc.api}/orders/export?created_to=${encodeURIComponent(ok)}`)).status,
      ).toBe(200);
    }
  });

  it('names and notes shown to people refuse control characters and bidi overrides', async () => {
    const session = { authorization: `Bearer ${t.token}` };
    for (const name of [
      'ci\u0000bot',
      'ci\u001b[31mbot',
      'evil\u202egnp.exe',
      'two\nlines',
      '   ',
      // Shows nothing: zero width space, word joiner, soft hyphen, Hangul filler, blank Braille,
      // ZWNJ + ZWJ, no-break space.
      '\u200b',
      '\u2060\u2060',
      '\u00ad',
      '\u3164',
      '\u2800',
      '\u200c\u200d',
      '\u00a0',
      '\u0301\u034f', // a combining accent and the combining grapheme joiner, on nothing
    ]) {
      const res = await http(`${svc.api}/api-keys`, {
        method: 'POST',
        headers: session,
        json: { name, environment: 'test' },
      });
      const err = expectContractError(res, 400, 'VALIDATION_FAILED');
      expect(err.details.fields.map((f: { field: string }) => f.field)).toEqual(['name']);
    }
    const ok = await http(`${svc.api}/api-keys`, {
      method: 'POST',
      headers: session,
      // Joiners inside a name that shows something stay allowed (scripts, emoji sequences).
      json: {
        name: 'Café bot ✓ עברית \u{1f469}\u200d\u{1f4bb} می\u200cخواهم',
        environment: 'test',
      },
    });
    expect(ok.status).toBe(201);
    // A reason may span lines, but hides nothing either.
    const ask = (reason: string) =>
      http(`${svc.api}/api-keys/${ok.body.id}/tier-request`, {
        method: 'POST',
        headers: session,
        json: { tier: 'PRO', reason },
      });
    expectContractError(await ask('more\u202e traffic'), 400, 'VALIDATION_FAILED');
    expect((await ask('more traffic:\n- bots\n- backtests')).status).toBe(202);
  });
});
